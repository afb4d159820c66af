package postgres

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// probeBatch is a signed batch of n new turns for positions from on.
func probeBatch(priv ed25519.PrivateKey, tag string, seen, from int64, n int) []journal.AppendRequest {
	reqs := make([]journal.AppendRequest, n)
	es := make([]journal.Entry, n)
	for i := range reqs {
		k := fmt.Sprintf("%s-%d", tag, i)
		pl := fmt.Appendf(nil, `{"p":"bank","e":[{"k":"deposited","d":{"a":"a%d","n":1}}],"r":{"ok":true}}`, i%8)
		reqs[i] = journal.AppendRequest{Holder: "n1", Epoch: 1, SeenPosition: seen, Kind: "host.turn", Key: k, Payload: pl,
			Position: from + int64(i)}
		es[i] = journal.Entry{World: "w", Position: reqs[i].Position, Epoch: 1, Kind: "host.turn", Holder: "n1", Key: k, Payload: pl}
	}
	reqs[n-1].Signature = journal.SignBatch(priv, es)
	return reqs
}

// TestSignedAppendProbesKeysByIndex: the signed append's key check
// (migration 0018) reads journal_entries only through one probe of the
// (world, key) index per key, however long the journal. 0014's join was
// planned as a scan of the world's rows once the journal grew (the
// append's cost rose with it: 6.6 ms per 200-entry batch at 20,000
// entries, 28.5 ms at 160,000). Counted in the append's own transaction
// (pg_stat_xact_user_tables), so the load on the machine cannot bend it.
func TestSignedAppendProbesKeysByIndex(t *testing.T) {
	ctx := context.Background()
	d := open(t, Config{})
	pub, priv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	_, err = d.NodeKeyRegister(ctx, &driver.NodeKeyRegisterParams{Node: "n1", PublicKey: pub})
	require.NoError(t, err)
	w, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: "w", Home: "n1", Term: time.Hour})
	require.NoError(t, err)
	seen, head := w.State.Position, w.State.Position
	const n, batches = 200, 40 // a journal of 8,000 turns
	for b := range batches {
		out, err := d.JournalAppend(ctx, &driver.JournalAppendParams{World: "w", Requests: probeBatch(priv, fmt.Sprint("b", b), seen, head+1, n)})
		require.NoError(t, err)
		require.NoError(t, out[0].Err)
		head += n
	}
	_, err = d.s.general.Exec(ctx, "ANALYZE journal_entries")
	require.NoError(t, err)

	// On a connection of its own, so its session plans the function's
	// statements afresh (PL/pgSQL's first calls plan with the values).
	conn, err := d.s.general.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	for try := range 6 { // past PL/pgSQL's five custom plans, onto its generic one
		reqs := probeBatch(priv, fmt.Sprint("probe", try), seen, head+1, n)
		args := appendArgs(reqs)
		tx, err := conn.Begin(ctx)
		require.NoError(t, err)
		// The view holds the backend's counts not yet flushed (earlier
		// transactions' too): the call's are the difference.
		counts := func() (c [4]int64) {
			require.NoError(t, tx.QueryRow(ctx, `SELECT seq_scan, seq_tup_read, coalesce(idx_scan, 0), coalesce(idx_tup_fetch, 0)
				FROM pg_stat_xact_user_tables WHERE relname = 'journal_entries' AND schemaname = current_schema()`).
				Scan(&c[0], &c[1], &c[2], &c[3]))
			return c
		}
		before := counts()
		rows, err := tx.Query(ctx, `SELECT o_position, o_reason FROM leasehold_journal_append($1, NULL, $2, $3, $4, $5, $6, $7, $8, $9, $10, true)`,
			append([]any{"w"}, append(args, reqs[n-1].Signature, []byte(pub))...)...)
		require.NoError(t, err)
		k := 0
		for rows.Next() {
			var pos int64
			var reason *string
			require.NoError(t, rows.Scan(&pos, &reason))
			require.Nil(t, reason, "entry %d refused", k)
			require.Equal(t, head+1+int64(k), pos)
			k++
		}
		require.NoError(t, rows.Err())
		require.Equal(t, n, k)
		after := counts()
		seqScans, seqRead, idxScans, idxFetched := after[0]-before[0], after[1]-before[1], after[2]-before[2], after[3]-before[3]
		t.Logf("call %d at %d entries: seq scans %d (%d rows), index scans %d (%d rows fetched)", try+1, head, seqScans, seqRead, idxScans, idxFetched)
		require.Zero(t, seqScans, "the key check scanned journal_entries")
		require.LessOrEqual(t, idxScans, int64(n), "more than one index scan per key")
		require.Zero(t, idxFetched, "new keys: no journal row is read (%d were)", idxFetched)
		require.NoError(t, tx.Rollback(ctx))
	}
}

// appendArgs are leasehold_journal_append's array arguments for reqs
// (holders, epochs, seens, kinds, keys, payloads, positions).
func appendArgs(reqs []journal.AppendRequest) []any {
	var (
		holders, kinds, keys []string
		epochs, seens, posns []int64
		payloads             [][]byte
	)
	for _, r := range reqs {
		holders, epochs, seens = append(holders, r.Holder), append(epochs, r.Epoch), append(seens, r.SeenPosition)
		kinds, keys, payloads = append(kinds, string(r.Kind)), append(keys, r.Key), append(payloads, r.Payload)
		posns = append(posns, r.Position)
	}
	return []any{holders, epochs, seens, kinds, keys, payloads, posns}
}
