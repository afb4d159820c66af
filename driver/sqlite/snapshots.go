package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// WorldSnapshotPut implements driver.Driver: one transaction on the
// writer checks the world's epoch (the fence) and the entry's hash at the
// position, then upserts the row only if it moves the world's snapshot
// forward (the WHERE of the upsert: a late taker never pushes it back).
// The writer is the only one, so no grant lands between the check and
// the write.
func (d *store) WorldSnapshotPut(ctx context.Context, p *driver.WorldSnapshotPutParams) error {
	fail := func(err error) error {
		return fmt.Errorf("sqlite: storing the snapshot of world %q at %d: %w", p.World, p.Position, err)
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	var epoch int64
	var holder string
	err = tx.QueryRowContext(ctx, `SELECT epoch, holder FROM worlds WHERE id = ?`, p.World).Scan(&epoch, &holder)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fail(fmt.Errorf("no such world: %w", driver.ErrNotFound))
	case err != nil:
		return fail(err)
	case p.Epoch < epoch:
		return fail(snapshotFenced(p, epoch, holder))
	}
	var hash []byte
	err = tx.QueryRowContext(ctx, `SELECT hash FROM journal_entries WHERE world = ? AND position = ?`, p.World, p.Position).Scan(&hash)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fail(fmt.Errorf("no journal entry there: %w", driver.ErrNotFound))
	case err != nil:
		return fail(err)
	case !bytes.Equal(hash, p.EntryHash):
		return fail(fmt.Errorf("the entry there has another hash: %w", driver.ErrConflict))
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO world_snapshots (world, program, position, entry_hash, data, taken_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (world) DO UPDATE SET program = excluded.program, position = excluded.position,
			entry_hash = excluded.entry_hash, data = excluded.data, taken_at = excluded.taken_at
		WHERE excluded.position > world_snapshots.position`,
		p.World, p.Program, p.Position, p.EntryHash, nonNil(p.Data), d.clock.Now().UnixMicro()); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}

// WorldSnapshotGet implements driver.Driver.
func (d *store) WorldSnapshotGet(ctx context.Context, p *driver.WorldSnapshotGetParams) (*driver.WorldSnapshot, error) {
	s := &driver.WorldSnapshot{World: p.World}
	var at int64
	err := d.r.QueryRowContext(ctx, `SELECT program, position, entry_hash, data, taken_at FROM world_snapshots WHERE world = ?`,
		p.World).Scan(&s.Program, &s.Position, &s.EntryHash, &s.Data, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("world %q has no snapshot: %w", p.World, driver.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: reading the snapshot of world %q: %w", p.World, err)
	}
	if len(s.Data) == 0 {
		s.Data = nil
	}
	s.TakenAt = fromMicros(at)
	return s, nil
}

// snapshotFenced is the refusal of a put under an epoch the world has
// moved past: the typed lease refusal, as an append's would be.
func snapshotFenced(p *driver.WorldSnapshotPutParams, epoch int64, holder string) error {
	return &journal.RefusedError{Op: "snapshot", World: p.World, Epoch: p.Epoch, Reason: journal.ReasonStaleEpoch,
		CurrentEpoch: epoch, CurrentHolder: holder}
}
