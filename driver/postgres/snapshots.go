package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// putSnapshot checks the world's epoch (the fence) and the entry's hash
// at the position and upserts the row in one statement: the insert
// selects from the entry only when the taker's epoch is not below the
// world's and the hash is the taker's, and the upsert's WHERE only moves
// the world's snapshot forward (a late taker never pushes it back). It
// answers the world's epoch and holder (NULL: no world) and the hash
// found there (NULL: no entry), so the caller can tell the refusals
// apart. The epoch is read in the statement's snapshot, without a lock on
// the world's row (which every append updates: a put of up to 16 MiB
// must not hold them up): a grant that commits while the put runs is
// ordered after it, as a grant that commits after an append's check is.
const putSnapshot = `
WITH w AS (
    SELECT epoch, holder FROM worlds WHERE id = $1
), e AS (
    SELECT hash FROM journal_entries WHERE world = $1 AND position = $3
), ins AS (
    INSERT INTO world_snapshots (world, program, position, entry_hash, data, taken_at)
    SELECT $1, $2, $3, $4, $5, coalesce($6::timestamptz, clock_timestamp()) FROM e, w WHERE e.hash = $4 AND w.epoch <= $7
    ON CONFLICT (world) DO UPDATE SET program = excluded.program, position = excluded.position,
        entry_hash = excluded.entry_hash, data = excluded.data, taken_at = excluded.taken_at
    WHERE excluded.position > world_snapshots.position
    RETURNING 1
)
SELECT (SELECT epoch FROM w), (SELECT holder FROM w), (SELECT hash FROM e)`

// WorldSnapshotPut implements driver.Driver.
func (d *store) WorldSnapshotPut(ctx context.Context, p *driver.WorldSnapshotPutParams) error {
	fail := func(err error) error {
		return fmt.Errorf("postgres: storing the snapshot of world %q at %d: %w", p.World, p.Position, err)
	}
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return fail(err)
	}
	defer conn.Release()
	var hash []byte
	var epoch *int64
	var holder *string
	data := p.Data
	if data == nil {
		data = []byte{}
	}
	if err := conn.QueryRow(ctx, putSnapshot, p.World, p.Program, p.Position, p.EntryHash, data, d.fakeNow(), p.Epoch).Scan(&epoch, &holder, &hash); err != nil {
		return fail(withCtx(ctx, err))
	}
	switch {
	case epoch == nil:
		return fail(fmt.Errorf("no such world: %w", driver.ErrNotFound))
	case p.Epoch < *epoch:
		return fail(&journal.RefusedError{Op: "snapshot", World: p.World, Epoch: p.Epoch, Reason: journal.ReasonStaleEpoch,
			CurrentEpoch: *epoch, CurrentHolder: *holder})
	case hash == nil:
		return fail(fmt.Errorf("no journal entry there: %w", driver.ErrNotFound))
	case !bytes.Equal(hash, p.EntryHash):
		return fail(fmt.Errorf("the entry there has another hash: %w", driver.ErrConflict))
	}
	return nil
}

// WorldSnapshotGet implements driver.Driver.
func (d *store) WorldSnapshotGet(ctx context.Context, p *driver.WorldSnapshotGetParams) (*driver.WorldSnapshot, error) {
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading the snapshot of world %q: %w", p.World, err)
	}
	defer conn.Release()
	s := &driver.WorldSnapshot{World: p.World}
	err = conn.QueryRow(ctx, `SELECT program, position, entry_hash, data, taken_at FROM world_snapshots WHERE world = $1`,
		p.World).Scan(&s.Program, &s.Position, &s.EntryHash, &s.Data, &s.TakenAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("world %q has no snapshot: %w", p.World, driver.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: reading the snapshot of world %q: %w", p.World, withCtx(ctx, err))
	}
	if len(s.Data) == 0 {
		s.Data = nil
	}
	s.TakenAt = s.TakenAt.UTC()
	return s, nil
}
