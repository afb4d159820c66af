package drivertest

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// World snapshots (issue 11, driver.SnapshotStore): a cache of a
// program's state at a journal position. The store takes one only for a
// position whose entry has the hash the taker folded through, keeps the
// newest, and a late taker never pushes it back.

func init() {
	worldCases = append(worldCases, snapshotCases...)
}

func (e *env) putSnapshot(p driver.WorldSnapshotPutParams) error {
	return e.d.WorldSnapshotPut(e.ctx, &p)
}

func (e *env) snapshot(world string) *driver.WorldSnapshot {
	e.t.Helper()
	s, err := e.d.WorldSnapshotGet(e.ctx, &driver.WorldSnapshotGetParams{World: world})
	require.NoError(e.t, err)
	return s
}

// notes appends n note entries to w (held by "h", epoch 1).
func (e *env) notes(w string, n int) {
	e.t.Helper()
	reqs := make([]journal.AppendRequest, n)
	for i := range reqs {
		reqs[i] = journal.AppendRequest{Holder: "h", Epoch: 1, SeenPosition: 1, Kind: "note", Payload: []byte(`{}`)}
	}
	for _, o := range e.appendBatch(w, reqs) {
		require.NoError(e.t, o.Err)
	}
}

var snapshotCases = []Case{
	{"WorldSnapshotPutGetNewestOnly", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w", "h")
		e.notes("w", 3)
		es := e.read("w")
		_, err := e.d.WorldSnapshotGet(e.ctx, &driver.WorldSnapshotGetParams{World: "w"})
		require.ErrorIs(t, err, lease.ErrNotFound, "no snapshot yet")
		require.NoError(t, e.putSnapshot(driver.WorldSnapshotPutParams{World: "w", Program: "kv", Epoch: 1, Position: 2, EntryHash: es[1].Hash, Data: []byte("at-2")}))
		require.Equal(t, driver.WorldSnapshot{World: "w", Program: "kv", Position: 2, EntryHash: es[1].Hash, Data: []byte("at-2"), TakenAt: StartTime}, *e.snapshot("w"))

		e.h.Clock.Advance(time.Second)
		require.NoError(t, e.putSnapshot(driver.WorldSnapshotPutParams{World: "w", Program: "kv", Epoch: 1, Position: 4, EntryHash: es[3].Hash, Data: []byte("at-4")}))
		got := e.snapshot("w")
		require.Equal(t, int64(4), got.Position)
		require.Equal(t, []byte("at-4"), got.Data)
		require.Equal(t, StartTime.Add(time.Second), got.TakenAt)

		// A late taker (position 3 < 4) is answered nil and changes nothing.
		before, err := e.fingerprint()
		require.NoError(t, err)
		require.NoError(t, e.putSnapshot(driver.WorldSnapshotPutParams{World: "w", Program: "kv", Epoch: 1, Position: 3, EntryHash: es[2].Hash, Data: []byte("at-3")}))
		require.NoError(t, e.putSnapshot(driver.WorldSnapshotPutParams{World: "w", Program: "kv", Epoch: 1, Position: 4, EntryHash: es[3].Hash, Data: []byte("again")}))
		after, err := e.fingerprint()
		require.NoError(t, err)
		require.Equal(t, before, after, "a snapshot at or below the stored one writes nothing")
		require.Equal(t, []byte("at-4"), e.snapshot("w").Data)
	}},
	{"WorldSnapshotPutChecksTheEntry", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w", "h")
		e.create("v", "h")
		e.notes("w", 1)
		es := e.read("w")
		wrong := bytes.Clone(es[1].Hash)
		wrong[0] ^= 1
		before, err := e.fingerprint()
		require.NoError(t, err)
		err = e.putSnapshot(driver.WorldSnapshotPutParams{World: "w", Program: "kv", Epoch: 1, Position: 2, EntryHash: wrong, Data: []byte("x")})
		require.ErrorIs(t, err, lease.ErrConflict, "a hash the journal does not have at the position")
		err = e.putSnapshot(driver.WorldSnapshotPutParams{World: "v", Program: "kv", Epoch: 1, Position: 1, EntryHash: es[0].Hash, Data: []byte("x")})
		require.ErrorIs(t, err, lease.ErrConflict, "another world's entry hash")
		err = e.putSnapshot(driver.WorldSnapshotPutParams{World: "w", Program: "kv", Epoch: 1, Position: 3, EntryHash: es[1].Hash, Data: []byte("x")})
		require.ErrorIs(t, err, lease.ErrNotFound, "a position past the head")
		err = e.putSnapshot(driver.WorldSnapshotPutParams{World: "nope", Program: "kv", Epoch: 1, Position: 1, EntryHash: es[0].Hash, Data: []byte("x")})
		require.ErrorIs(t, err, lease.ErrNotFound, "an unknown world")
		for _, p := range []driver.WorldSnapshotPutParams{
			{World: "w", Program: "kv", Epoch: 1, Position: 0, EntryHash: es[0].Hash},
			{World: "w", Program: "kv", Epoch: 0, Position: 2, EntryHash: es[1].Hash},
			{World: "w", Program: "kv", Epoch: 1, Position: 2, EntryHash: es[1].Hash[:31]},
			{World: "w", Program: "", Epoch: 1, Position: 2, EntryHash: es[1].Hash},
			{World: "", Program: "kv", Epoch: 1, Position: 2, EntryHash: es[1].Hash},
			{World: "w", Program: "kv", Epoch: 1, Position: 2, EntryHash: es[1].Hash, Data: make([]byte, driver.MaxSnapshotBytes+1)},
		} {
			require.ErrorIs(t, e.putSnapshot(p), lease.ErrInvalid)
		}
		after, err := e.fingerprint()
		require.NoError(t, err)
		require.Equal(t, before, after, "a refused snapshot writes nothing")
		_, err = e.d.WorldSnapshotGet(e.ctx, &driver.WorldSnapshotGetParams{World: ""})
		require.ErrorIs(t, err, lease.ErrInvalid)
		_, err = e.d.WorldSnapshotGet(e.ctx, &driver.WorldSnapshotGetParams{World: "nope"})
		require.ErrorIs(t, err, lease.ErrNotFound)
	}},
	{"WorldSnapshotPutFencedBelowTheEpoch", func(t *testing.T, f Factory) {
		// A put names the epoch its taker writes under; once the world
		// has moved past it (here a handoff), the put is the lease
		// refusal an append would get and writes nothing. The epoch the
		// handoff started, and any later one, still put.
		e := newEnv(t, f)
		e.create("w", "h")
		e.notes("w", 2)
		e.handoff("w", "h", "n2", 1)
		es := e.read("w")
		before, err := e.fingerprint()
		require.NoError(t, err)
		err = e.putSnapshot(driver.WorldSnapshotPutParams{World: "w", Program: "kv", Epoch: 1, Position: 3, EntryHash: es[2].Hash, Data: []byte("zombie")})
		require.ErrorIs(t, err, lease.ErrFenced)
		var re *journal.RefusedError
		require.ErrorAs(t, err, &re)
		require.Equal(t, journal.RefusedError{Op: "snapshot", World: "w", Epoch: 1, Reason: journal.ReasonStaleEpoch, CurrentEpoch: 2, CurrentHolder: "n2"}, *re)
		after, err := e.fingerprint()
		require.NoError(t, err)
		require.Equal(t, before, after, "a fenced put writes nothing")
		_, err = e.d.WorldSnapshotGet(e.ctx, &driver.WorldSnapshotGetParams{World: "w"})
		require.ErrorIs(t, err, lease.ErrNotFound)

		require.NoError(t, e.putSnapshot(driver.WorldSnapshotPutParams{World: "w", Program: "kv", Epoch: 2, Position: 3, EntryHash: es[2].Hash, Data: []byte("at-3")}))
		require.Equal(t, []byte("at-3"), e.snapshot("w").Data)
		require.NoError(t, e.putSnapshot(driver.WorldSnapshotPutParams{World: "w", Program: "kv", Epoch: 3, Position: 4, EntryHash: es[3].Hash, Data: []byte("at-4")}),
			"an epoch above the world's is not fenced (no writer has one, and the hash check still binds the data to the journal)")
		// The fence is checked before the entry: a stale taker learns it
		// lost the lease, not that its hash is wrong.
		err = e.putSnapshot(driver.WorldSnapshotPutParams{World: "w", Program: "kv", Epoch: 1, Position: 9, EntryHash: es[2].Hash})
		require.ErrorIs(t, err, lease.ErrFenced)
	}},
	{"WorldSnapshotEmptyData", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		w := e.create("w", "h")
		require.NoError(t, e.putSnapshot(driver.WorldSnapshotPutParams{World: "w", Program: "kv", Epoch: 1, Position: 1, EntryHash: w.LastHash}))
		got := e.snapshot("w")
		require.Nil(t, got.Data, "no data reads back as nil on both stores")
		require.Equal(t, w.LastHash, got.EntryHash)
	}},
}
