package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// MaxSnapshotBytes bounds one world snapshot's data (16 MiB): a snapshot
// is read whole by every node that prepares the world, and a state bigger
// than this is cheaper replayed in pages than fetched in one row.
const MaxSnapshotBytes = 16 << 20

// SnapshotStore keeps world snapshots: a program's state folded through a
// journal position, so that a node preparing a world restores it and
// replays only the entries after it (host.Snapshotter).
//
// A snapshot is a cache, never a record: the journal stays the only truth.
// The store therefore keeps one snapshot per world (the newest) and takes
// one only for a position whose entry has the hash the taker folded
// through (checked in the same statement), and a reader still checks the
// hash against the journal before it trusts the data: a snapshot whose
// entry differs, or whose data does not restore, is ignored and the world
// replayed from position 1. A put is fenced all the same (it names the
// epoch its taker writes under, and one below the world's current epoch
// is refused): a snapshot of the journal's own prefix is the same state
// whoever folded it, but a zombie that lost the lease has no business
// writing to the world at all, and the fence makes "who may write a
// world's rows" one rule for the journal and its cache.
type SnapshotStore interface {
	// WorldSnapshotPut stores p as p.World's snapshot unless the stored
	// one is at p.Position or later (then nothing changes and it returns
	// nil: a late taker does not push the snapshot back). ErrNotFound if
	// the world does not exist or has no entry at p.Position; a
	// *journal.RefusedError (Op "snapshot", ReasonStaleEpoch, unwrapping
	// to ErrFenced) if p.Epoch is below the world's current epoch;
	// ErrConflict if the entry's hash is not p.EntryHash (the data was
	// folded from another journal). The checks run in that order, and a
	// refused put changes nothing.
	WorldSnapshotPut(ctx context.Context, p *WorldSnapshotPutParams) error
	// WorldSnapshotGet returns p.World's snapshot; ErrNotFound if it has
	// none (or the world does not exist).
	WorldSnapshotGet(ctx context.Context, p *WorldSnapshotGetParams) (*WorldSnapshot, error)
}

// WorldSnapshot is one world's stored snapshot.
type WorldSnapshot struct {
	World     string
	Program   string // the program whose state Data is
	Position  int64  // the journal position the state is folded through
	EntryHash []byte // the hash of the entry at Position when it was taken
	Data      []byte // the program's encoding (host.Snapshotter), opaque to the store
	TakenAt   time.Time
}

// WorldSnapshotPutParams stores a world's snapshot.
type WorldSnapshotPutParams struct {
	World   string
	Program string
	// Epoch is the epoch the taker writes under (>= 1): the holder's, or
	// for a holder's parting snapshot the epoch its handoff started, or
	// for an operator's (host.TakeSnapshot) the world's epoch when the
	// fold began. A put below the world's current epoch is fenced.
	Epoch     int64
	Position  int64  // >= 1
	EntryHash []byte // 32 bytes: journal entry hashes are SHA-256
	Data      []byte // at most MaxSnapshotBytes
}

// Class implements lease.Classed: a snapshot is a cache, but a put is one
// transaction the caller waits for (it is never coalesced with others).
func (*WorldSnapshotPutParams) Class() lease.Durability { return lease.DurableBatched }

// Validate checks the identifiers, the position and the sizes.
func (p *WorldSnapshotPutParams) Validate() error {
	if err := journal.ValidateID("world", p.World); err != nil {
		return err
	}
	if err := journal.ValidateID("program", p.Program); err != nil {
		return err
	}
	if p.Epoch < 1 {
		return &journal.InputError{Field: "snapshot epoch", Problem: fmt.Sprintf("%d: an epoch is at least 1", p.Epoch)}
	}
	if p.Position < 1 {
		return &journal.InputError{Field: "snapshot position", Problem: fmt.Sprintf("%d: a journal position is at least 1", p.Position)}
	}
	if len(p.EntryHash) != 32 {
		return &journal.InputError{Field: "snapshot entry hash", Problem: fmt.Sprintf("%d bytes: an entry hash is 32 (SHA-256)", len(p.EntryHash))}
	}
	if len(p.Data) > MaxSnapshotBytes {
		return &journal.InputError{Field: "snapshot data", Problem: fmt.Sprintf("%d bytes is over the limit of %d", len(p.Data), MaxSnapshotBytes)}
	}
	return nil
}

// WorldSnapshotGetParams names a world.
type WorldSnapshotGetParams struct{ World string }

// Validate checks the world.
func (p *WorldSnapshotGetParams) Validate() error { return journal.ValidateID("world", p.World) }
