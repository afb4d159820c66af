package postgres

import (
	"encoding/binary"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// TestAppendStatementCost (a measurement, run with LEASEHOLD_MEASURE=1)
// takes the single append's one statement (appendOneSQL) apart on the
// server: the store's one-row commit, the statement as shipped, then the
// statement with one part taken out at a time — the function's fallback
// branch, the inline notification, the SQL hash chain — down to a bare
// head UPDATE + entry INSERT, each alone, and the driver's JournalAppend;
// and two ideas measured and not kept (segs: the hash's request-only parts
// built by the client, its entries' hashes checked at the end; nojoin:
// the statement without its concurrency guard).
// Each variant appends to a world of its own, one after another in slices
// round after round so a loaded machine bends them alike; it logs the p50
// latency, its ratio to the one-row commit, and the backend's CPU per op
// (the server on this machine). Variants without the hash write a head
// hash no reader checks: the schema is thrown away.
func TestAppendStatementCost(t *testing.T) {
	if os.Getenv("LEASEHOLD_MEASURE") == "" {
		t.Skip("a measurement: LEASEHOLD_MEASURE=1")
	}
	d, url, schema := openIn(t, Config{})
	ctx := t.Context()
	worlds := []string{"shipped", "segs", "nojoin", "nofn", "silent", "silentnofn", "nohash", "bare", "insert", "update", "driver"}
	for _, w := range worlds {
		_, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: w, Home: "bench", Term: 24 * time.Hour})
		require.NoError(t, err)
	}
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	for _, q := range []string{"SET search_path = " + pgx.Identifier{schema}.Sanitize(), "SET synchronous_commit = on",
		"CREATE TABLE floor (a bigserial PRIMARY KEY, b bytea)"} {
		_, err := conn.Exec(ctx, q)
		require.NoError(t, err)
	}
	pid := int(conn.PgConn().PID())

	// The variants, each cut from the shipped statement so they follow it.
	cut := func(q, from, to, with string) string {
		i, j := strings.Index(q, from), strings.Index(q, to)
		require.True(t, i >= 0 && j > i, "cut %q..%q", from, to)
		return q[:i] + with + q[j:]
	}
	noFn := appendOneSQL[:strings.Index(appendOneSQL, "UNION ALL")]
	// segs: no function branch, and the hash's request-only parts
	// (domain and world; epoch, kind, holder, key) built by the client and
	// sent as two bytea parameters ($13, $14), so the server's expression
	// is a few concatenations, not twenty calls.
	segs := cut(noFn, "last_hash = sha256(", "FROM worlds s, c", `last_hash = sha256($13::bytea || int8send(w.position + 1) || $14::bytea
	           || int8send((extract(epoch FROM greatest(c.t, w.last_time)) * 1000000)::bigint)
	           || int4send(length(w.last_hash)) || w.last_hash
	           || int4send(length($8::bytea)) || $8::bytea)
	  `)
	seg := func(b []byte, s string) []byte { return append(binary.BigEndian.AppendUint32(b, uint32(len(s))), s...) }
	pre := seg([]byte("leasehold/journal/v1\n"), "segs")
	mid := seg(seg(seg(binary.BigEndian.AppendUint64(nil, 1), "bench"), "bench"), "")
	// nojoin: no function branch and no self-join (the snapshot's head, s,
	// that keeps the key probe and the previous hash current under
	// EvalPlanQual): what the append rule costs without its concurrency
	// guard. Its entries' prev_hash is the new hash, not the old (no OLD in
	// Postgres 15's RETURNING): a measurement only.
	noJoin := strings.NewReplacer("FROM worlds s, c", "FROM c",
		"AND s.id = $1 AND w.position = s.position AND w.last_hash = s.last_hash", "",
		"s.last_hash AS prev_hash", "w.last_hash AS prev_hash").Replace(noFn)
	silent := strings.Replace(appendOneSQL, notifyInline,
		"true AS notified, set_config('leasehold.journal_notified', 'on', true) AS trigger_skipped", 1)
	silentNoFn := silent[:strings.Index(silent, "UNION ALL")]
	noHash := cut(silentNoFn, "last_hash = sha256(", "FROM worlds s, c", "last_hash = w.last_hash\n")
	const (
		bare = `WITH h AS (UPDATE worlds SET position = position + 1, last_hash = $2, last_time = now()
		WHERE id = $1 AND epoch = 1 AND holder = 'bench'
		RETURNING position, set_config('leasehold.journal_notified', 'on', true))
	INSERT INTO journal_entries (world, position, epoch, kind, holder, key, payload, store_time, prev_hash, hash, signature)
	SELECT $1, h.position, 1, 'bench', 'bench', '', $3, now(), $2, $2, '' FROM h RETURNING position`
		insertOnly = `INSERT INTO journal_entries (world, position, epoch, kind, holder, key, payload, store_time, prev_hash, hash, signature)
	SELECT $1, coalesce(max(position), 0) + 1, 1, 'bench', 'bench', '', $3, now(), $2, $2, ''
	  FROM journal_entries WHERE world = $1 RETURNING position`
		updateOnly = `UPDATE worlds SET last_hash = $2, last_time = now() WHERE id = $1 AND epoch = 1 AND holder = 'bench' AND $3::bytea IS NOT NULL`
	)
	payload, hash := []byte(`{"n":1}`), make([]byte, 32)
	// shipped runs a variant with appendOneSQL's twelve parameters, then
	// extra (segs' two).
	shipped := func(world, q string, extra ...any) func() error {
		args := append([]any{world, nil, "bench", int64(1), int64(1), "bench", "", payload,
			int64(0), []byte{}, nil, false}, extra...)
		return func() error {
			var pos, epoch int64
			var reason *string
			var holder string
			var key []byte
			err := conn.QueryRow(ctx, q, args...).Scan(&pos, &reason, &epoch, &holder, &key)
			if err == nil && reason != nil {
				t.Fatalf("%s: refused %s", world, *reason)
			}
			return err
		}
	}
	simple := func(world, q string) func() error {
		return func() error { _, err := conn.Exec(ctx, q, world, hash, payload); return err }
	}
	steps := []struct {
		name string
		fn   func() error
	}{
		{"floor: one-row autocommit INSERT", func() error {
			_, err := conn.Exec(ctx, "INSERT INTO floor (b) VALUES ($1)", payload)
			return err
		}},
		{"appendOneSQL as shipped", shipped("shipped", appendOneSQL)},
		{"- the function branch, client hash parts", shipped("segs", segs, pre, mid)},
		{"- the function branch", shipped("nofn", noFn)},
		{"- the function branch, - the self-join", shipped("nojoin", noJoin)},
		{"- the notification", shipped("silent", silent)},
		{"- both", shipped("silentnofn", silentNoFn)},
		{"- both, - the SQL hash", shipped("nohash", noHash)},
		{"bare head UPDATE + entry INSERT", simple("bare", bare)},
		{"entry INSERT alone", simple("insert", insertOnly)},
		{"head UPDATE alone", simple("update", updateOnly)},
		{"driver JournalAppend", func() error {
			out, err := d.JournalAppend(ctx, &driver.JournalAppendParams{World: "driver",
				Requests: []journal.AppendRequest{{Holder: "bench", Epoch: 1, SeenPosition: 1, Kind: "bench", Payload: payload}}})
			if err != nil {
				return err
			}
			return out[0].Err
		}},
	}
	const rounds, slice = 8, 250 * time.Millisecond
	lats := make([][]time.Duration, len(steps))
	cpu := make([]time.Duration, len(steps))
	for round := range rounds {
		for i, s := range steps {
			c0 := backendCPU(pid)
			for start := time.Now(); time.Since(start) < slice; {
				t0 := time.Now()
				require.NoError(t, s.fn(), s.name)
				if round > 0 { // the first round warms up
					lats[i] = append(lats[i], time.Since(t0))
				}
			}
			if round > 0 {
				cpu[i] += backendCPU(pid) - c0
			}
		}
	}
	// The client-built parts must hash as journal.Canonical does.
	es, err := d.JournalRead(ctx, &driver.JournalReadParams{World: "segs", From: 1, Limit: 100})
	require.NoError(t, err)
	require.NotEmpty(t, es)
	for i := range es {
		require.True(t, journal.HashValid(&es[i]), "segs: entry %d's hash", es[i].Position)
	}
	p50 := func(l []time.Duration) time.Duration {
		sort.Slice(l, func(a, b int) bool { return l[a] < l[b] })
		return l[len(l)/2]
	}
	floor := p50(lats[0])
	for i, s := range steps {
		n := len(lats[i])
		per := "-" // the driver's statements run on its own pool's backends
		if i != len(steps)-1 {
			per = (cpu[i] / time.Duration(n)).Round(100 * time.Nanosecond).String()
		}
		m := p50(lats[i])
		t.Logf("%-34s p50 %9v  x floor %.2f  backend cpu/op %8s  n %d", s.name, m.Round(100*time.Nanosecond),
			float64(m)/float64(floor), per, n)
	}
}
