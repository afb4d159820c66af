package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/journal"
)

// countingStore is a real store that counts the journal entries read
// through it: the witness of how much of the journal a mirror replays,
// independent of the host's own counter (and of the machine's load).
type countingStore struct {
	driver.Driver
	read atomic.Int64
}

func (c *countingStore) JournalRead(ctx context.Context, p *driver.JournalReadParams) ([]journal.Entry, error) {
	es, err := c.Driver.JournalRead(ctx, p)
	c.read.Add(int64(len(es)))
	return es, err
}

// depositMany has 16 submitters deposit 1 into accounts a0..a15, n
// commands in all, and fails t on any error.
func depositMany(t testing.TB, h *host.Host, w string, n int) { depositRange(t, h, w, 0, n) }

// depositRange submits commands c<from>..c<to-1>, each a deposit of 1 to
// account a<i mod 16>, from 16 concurrent submitters.
func depositRange(t testing.TB, h *host.Host, w string, from, to int) {
	ctx := context.Background()
	const submitters = 16
	var wg sync.WaitGroup
	errs := make(chan error, submitters)
	for s := range submitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := from + s; i < to; i += submitters {
				cmd := host.Command{Key: fmt.Sprintf("c%d", i), Payload: json.RawMessage(fmt.Sprintf(`{"op":"deposit","account":"a%d","amount":1}`, i%submitters))}
				if _, err := h.Submit(ctx, w, cmd); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// waitSnapshot polls the store, with a generous deadline, until w's
// snapshot is at position at least min (the put runs off the world's
// loop, so nothing signals it to a test).
func waitSnapshot(t testing.TB, d driver.Driver, w string, min int64) *driver.WorldSnapshot {
	deadline := time.Now().Add(60 * time.Second)
	for {
		s, err := d.WorldSnapshotGet(context.Background(), &driver.WorldSnapshotGetParams{World: w})
		if err == nil && s.Position >= min {
			return s
		}
		if !time.Now().Before(deadline) {
			at := int64(-1)
			if s != nil {
				at = s.Position // not the whole snapshot: its data runs to megabytes
			}
			require.Failf(t, "no snapshot", "no snapshot of %s at %d or later (last at %d, err %v)", w, min, at, err)
		}
		time.Sleep(10 * time.Millisecond) // bounded polling of a condition, not a synchronization by time
	}
}

func balanceOf(t *testing.T, h *host.Host, w, account, key string) int64 {
	rep, err := h.Submit(context.Background(), w, host.Command{Key: key, Payload: json.RawMessage(`{"op":"balance","account":"` + account + `"}`)})
	require.NoError(t, err)
	var b programs.BankReply
	require.NoError(t, json.Unmarshal(rep.Payload, &b))
	return b.Balance
}

// TestHandoffReplaysOnlyTheTailAfterTheSnapshot: a world of 10,000
// turns, snapshotted every 4,000 positions by its home, is handed to a
// spill node; the spill node's Prepare restores the snapshot and reads
// only the entries after it (counted at the store), the acquire after the
// handoff only the handoff's tail, and the state it serves is the whole
// journal's.
func TestHandoffReplaysOnlyTheTailAfterTheSnapshot(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		const n, every = 10_000, 4_000
		home := newHost(t, d, "home-1", programs.Bank{}, func(c *host.Config) { c.SnapshotEvery = every })
		cs := &countingStore{Driver: d}
		spill := newHost(t, cs, "spill-1", programs.Bank{}, func(c *host.Config) { c.SnapshotEvery = -1 })
		require.NoError(t, home.Create(ctx, "big"))
		// The home takes a snapshot when its loop is idle (the inbox
		// empty, nothing in the air) and SnapshotEvery positions have
		// passed since the last, so under load the first can land
		// anywhere from every to the end of the first commands (a loop
		// kept busy by 16 submitters idles rarely), and a second only
		// every positions past the first: not at 2×every. So the first
		// commands stop just past every, the first snapshot (s1) lands
		// by their end, and the rest take the journal more than every
		// past s1 (10,000 − 4,200 > 4,000): the loop's idle turn after
		// the last of them takes the second at the latest.
		depositRange(t, home, "big", 0, every+200)
		s1 := waitSnapshot(t, d, "big", every)
		depositRange(t, home, "big", every+200, n)
		snap := waitSnapshot(t, d, "big", s1.Position+every)
		head, err := d.WorldGet(ctx, &driver.WorldGetParams{World: "big"})
		require.NoError(t, err)
		require.GreaterOrEqual(t, head.Position, int64(n+1))

		require.NoError(t, spill.Prepare(ctx, "big"))
		atPrepare := cs.read.Load()
		// The home still holds the world and may journal a renewal while
		// the spill node prepares (CI under load saw one): Prepare reads to
		// the head it finds, between the two heads read around it.
		head2, err := d.WorldGet(ctx, &driver.WorldGetParams{World: "big"})
		require.NoError(t, err)
		t.Logf("prepare read %d entries of %d–%d (snapshot at %d)", atPrepare, head.Position, head2.Position, snap.Position)
		require.GreaterOrEqual(t, atPrepare, head.Position-snap.Position+1, "the snapshot's entry (its check) and the entries after it")
		require.LessOrEqual(t, atPrepare, head2.Position-snap.Position+1, "nothing before the snapshot's entry")
		st := spill.Stats()
		require.Equal(t, int64(1), st.SnapshotsRestored)
		require.Zero(t, st.SnapshotsIgnored)
		require.Equal(t, atPrepare, st.EntriesRead, "the host's counter agrees with the store's")

		r := host.NewRouter(d, home, spill)
		require.NoError(t, r.Handoff(ctx, "big", "home-1", "spill-1"))
		after, err := d.WorldGet(ctx, &driver.WorldGetParams{World: "big"})
		require.NoError(t, err)
		require.LessOrEqual(t, cs.read.Load()-atPrepare, after.Position-head.Position, "the handoff's acquire reads only what was appended since the Prepare")
		t.Logf("prepare + handoff read %d entries of %d", cs.read.Load(), after.Position)

		var total int64
		for s := range 16 {
			total += balanceOf(t, spill, "big", fmt.Sprintf("a%d", s), fmt.Sprintf("bal-%d", s))
		}
		require.Equal(t, int64(n), total, "the restored state is the whole journal's")
		// The snapshot carries the newest replies by key: a retry of the
		// last command the home applied before the snapshot is answered
		// from memory, with no read of the journal.
		es, err := d.JournalRead(ctx, &driver.JournalReadParams{World: "big", From: snap.Position, Limit: 1})
		require.NoError(t, err)
		require.Equal(t, host.TurnKind, es[0].Kind, "the home snapshots right after a batch lands")
		var acct int
		_, err = fmt.Sscanf(es[0].Key, "c%d", &acct)
		require.NoError(t, err)
		readBefore := cs.read.Load()
		rep, err := spill.Submit(ctx, "big", host.Command{Key: es[0].Key,
			Payload: json.RawMessage(fmt.Sprintf(`{"op":"deposit","account":"a%d","amount":1}`, acct%16))})
		require.NoError(t, err)
		require.True(t, rep.Duplicate)
		require.Equal(t, snap.Position, rep.Position)
		require.Equal(t, readBefore, cs.read.Load())
		require.Equal(t, []string{"big"}, spill.Held())
	})
}

// tamper runs raw SQL on the store under the test (sqlite, postgres).
func tamper(t *testing.T, d driver.Driver, sqliteSQL, postgresSQL string) {
	ctx := context.Background()
	switch x := d.(type) {
	case *sqlite.Driver:
		require.NoError(t, sqlite.ExecForTest(ctx, x, sqliteSQL))
	case *postgres.Driver:
		require.NoError(t, postgres.ExecForTest(ctx, x, postgresSQL))
	default:
		t.Fatalf("no raw SQL for %T", d)
	}
}

// TestUntrustedSnapshotIsIgnored: a snapshot whose entry hash is not the
// journal's at its position, and one whose bytes changed, are each
// ignored: the mirror replays the journal from position 1 and serves the
// right state.
func TestUntrustedSnapshotIsIgnored(t *testing.T) {
	cases := []struct {
		name, sqlite, postgres string
	}{
		{"wrong entry hash", `UPDATE world_snapshots SET entry_hash = zeroblob(32)`,
			`UPDATE world_snapshots SET entry_hash = decode(repeat('00', 32), 'hex')`},
		{"changed bytes", `UPDATE world_snapshots SET data = substr(data, 1, length(data) - 1)`,
			`UPDATE world_snapshots SET data = substring(data from 1 for length(data) - 1)`},
		{"another world's snapshot", `UPDATE world_snapshots SET data = (SELECT data FROM world_snapshots WHERE world = 'other') WHERE world = 'w'`,
			`UPDATE world_snapshots SET data = (SELECT data FROM world_snapshots WHERE world = 'other') WHERE world = 'w'`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			forEachDriver(t, func(t *testing.T, d driver.Driver) {
				ctx := context.Background()
				// The home takes no periodic snapshot (every is past the
				// test's journal), only one at each handoff: so once the
				// handoff's snapshot is stored, no put can land after the
				// tampering.
				home := newHost(t, d, "home-1", programs.Bank{}, func(c *host.Config) { c.SnapshotEvery = 1 << 40 })
				mid := newHost(t, d, "mid-1", programs.Bank{}, func(c *host.Config) { c.SnapshotEvery = -1 })
				require.NoError(t, home.Create(ctx, "w"))
				require.NoError(t, home.Create(ctx, "other"))
				depositMany(t, home, "w", 200)
				depositMany(t, home, "other", 60)
				r := host.NewRouter(d, home, mid)
				require.NoError(t, r.Handoff(ctx, "w", "home-1", "mid-1"))
				require.NoError(t, r.Handoff(ctx, "other", "home-1", "mid-1"))
				waitSnapshot(t, d, "other", 61)
				snap := waitSnapshot(t, d, "w", 201)
				tamper(t, d, tc.sqlite, tc.postgres)

				cs := &countingStore{Driver: d}
				spill := newHost(t, cs, "spill-1", programs.Bank{}, func(c *host.Config) { c.SnapshotEvery = -1 })
				require.NoError(t, spill.Prepare(ctx, "w"))
				head, err := d.WorldGet(ctx, &driver.WorldGetParams{World: "w"})
				require.NoError(t, err)
				st := spill.Stats()
				require.Equal(t, int64(1), st.SnapshotsIgnored, "the snapshot at %d is not trusted", snap.Position)
				require.Zero(t, st.SnapshotsRestored)
				require.Equal(t, head.Position, cs.read.Load()-1, "the check read one entry, then the whole journal was replayed")

				r.Add(spill)
				require.NoError(t, r.Handoff(ctx, "w", "mid-1", "spill-1"))
				var total int64
				for s := range 16 {
					total += balanceOf(t, spill, "w", fmt.Sprintf("a%d", s), fmt.Sprintf("bal-%d", s))
				}
				require.Equal(t, int64(200), total)
			})
		})
	}
}
