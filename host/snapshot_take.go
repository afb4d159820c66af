package host

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/lease"
)

// TakeSnapshot writes world w's snapshot now, from the store alone (the
// operator's `leasehold worlds snapshot`): it folds the journal with p
// from the newest snapshot it can trust through the head, as a holder's
// mirror would, and puts the state under the world's epoch as read
// before the fold. It needs no holder and does not disturb one: the fold
// of the journal's prefix is the state every holder has at that position,
// and the put only moves the world's snapshot forward. If the world's
// epoch moves while it folds (a grant, a handoff), the put is fenced (a
// *journal.RefusedError, lease.ErrFenced) and nothing is written: run it
// again. It returns the position the world's snapshot is at, and whether
// this call wrote it (false: the stored one was at the head already).
//
// Only the replies the fold meets are in the snapshot (up to the newest
// 4,096, as a holder's): what a holder remembers beyond the journal it
// read, nothing here does, and a host restoring the snapshot answers those
// keys from the store's key index, as it does for any key it forgot.
func TakeSnapshot(ctx context.Context, s Store, p Program, w string) (pos int64, wrote bool, err error) {
	ss, ok := s.(driver.SnapshotStore)
	if !ok {
		return 0, false, fmt.Errorf("world %s: the store keeps no snapshots (driver.SnapshotStore): %w", w, lease.ErrInvalid)
	}
	if _, ok := p.New().(Snapshotter); !ok {
		return 0, false, fmt.Errorf("world %s: program %s has no snapshot (its State is no Snapshotter): %w", w, p.Name(), lease.ErrInvalid)
	}
	head, err := s.WorldGet(ctx, &driver.WorldGetParams{World: w})
	if err != nil {
		return 0, false, err
	}
	var read, restored, ignored, taken atomic.Int64
	var c Config // the host's defaults for the replies a mirror keeps
	c.Store, c.Node, c.Program = s, "snapshot", p
	if err = c.withDefaults(); err != nil {
		return 0, false, err
	}
	m := newMirror(w, p, c.KeyRetention, c.MaxKeys, mirrorSnaps{store: ss, every: 1,
		log:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		read: &read, restored: &restored, ignored: &ignored, taken: &taken})
	if err = m.catchUp(ctx, s, time.Now); err != nil {
		return 0, false, err
	}
	if restored.Load() > 0 && m.pos == m.snapAt {
		return m.pos, false, nil // the stored snapshot is at the head: nothing newer to write
	}
	body, pos, ok, err := m.encodeSnapshot()
	if err != nil {
		return 0, false, err
	}
	if !ok {
		return 0, false, fmt.Errorf("world %s: nothing folded to snapshot: %w", w, lease.ErrInvalid)
	}
	if err = putSnapshot(ctx, s, ss, w, p.Name(), head.Epoch, pos, body); err != nil {
		return 0, false, err
	}
	return pos, true, nil
}
