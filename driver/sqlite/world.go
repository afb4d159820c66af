package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

const worldColumns = `id, home, default_term_us, position, last_hash, last_time, epoch, holder,
	term_us, expires_at, granted_position, created_at, holder_key`

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type rowScanner interface{ Scan(dest ...any) error }

func scanWorld(r rowScanner) (*driver.World, error) {
	h, err := scanHead(r) // headcache.go: the row as stored, then decoded
	if err != nil {
		return nil, err
	}
	return h.world(), nil
}

func getWorld(ctx context.Context, q queryer, id string) (*driver.World, error) {
	return worldRow(q.QueryRowContext(ctx, selectWorldSQL, id), id)
}

// worldRow scans getWorld's row.
func worldRow(row *sql.Row, id string) (*driver.World, error) {
	w, err := scanWorld(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("world %q: %w", id, driver.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: reading world %q: %w", id, err)
	}
	return w, nil
}

// WorldGet implements driver.Driver.
func (d *store) WorldGet(ctx context.Context, p *driver.WorldGetParams) (*driver.World, error) {
	st, err := d.readPrepared(ctx)
	if err != nil {
		return nil, err
	}
	return worldRow(st.worldByID.QueryRowContext(ctx, p.World), p.World)
}

// WorldList implements driver.Driver.
func (d *store) WorldList(ctx context.Context, p *driver.WorldListParams) ([]*driver.World, error) {
	limit := p.Limit // > 0: defaulted by driver.Validating
	q, args := `SELECT `+worldColumns+` FROM world_heads WHERE id > ? ORDER BY id LIMIT ?`, []any{p.After, limit}
	if p.Home != "" { // the worlds_home index serves it
		q, args = `SELECT `+worldColumns+` FROM world_heads WHERE home = ? AND id > ? ORDER BY id LIMIT ?`, []any{p.Home, p.After, limit}
	}
	rows, err := d.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing worlds: %w", err)
	}
	defer rows.Close()
	out, err := driver.CollectRows(rows, func() (*driver.World, error) { return scanWorld(rows) })
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing worlds: %w", err)
	}
	return out, nil
}

// WorldCreate implements driver.Driver.
func (d *store) WorldCreate(ctx context.Context, p *driver.WorldCreateParams) (*driver.World, error) {
	plan, err := journal.PlanCreate(p.World, p.FirstHolder(), p.Term, d.clock.Now())
	if err != nil {
		return nil, err
	}
	// The key is read before the create's transaction: a key registered
	// in between is carried from the node's next grant on.
	if err := journal.BindKeys(&plan, func(node string) ([]byte, error) { return nodeKey(ctx, d.r, node) }); err != nil {
		return nil, fmt.Errorf("sqlite: creating world %q: %w", p.World, err)
	}
	return d.insertWorld(ctx, p.Home, p.Term, plan.After, plan.Entries, nil)
}

// insertWorld writes a new world's head row and its whole journal in one
// transaction; the primary key makes a second create an ErrConflict.
func (d *store) insertWorld(ctx context.Context, home string, defTerm time.Duration, s journal.State,
	entries []journal.Entry, rejections []rejection) (*driver.World, error) {
	st, err := d.prepared(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: creating world %q: %w", s.World, err)
	}
	defer tx.Rollback()
	created := d.clock.Now()
	_, err = tx.ExecContext(ctx, `INSERT INTO worlds (`+worldColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.World, home, int64(defTerm/time.Microsecond), s.Position, nonNil(s.LastHash), s.LastTime.UnixMicro(), s.Epoch,
		s.Holder, int64(s.Term/time.Microsecond), expiresArg(s), s.GrantedAt, created.UnixMicro(), nonNil(s.HolderKey))
	if d.eng.IsUnique(err) {
		return nil, fmt.Errorf("world %q exists: %w", s.World, driver.ErrConflict)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: creating world %q: %w", s.World, err)
	}
	if err := d.insertEntries(ctx, tx, st, entries); err != nil {
		return nil, fmt.Errorf("sqlite: creating world %q: %w", s.World, err)
	}
	for _, r := range rejections {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO journal_rejections (world, epoch, holder) VALUES (?, ?, ?)`,
			s.World, r.epoch, r.holder); err != nil {
			return nil, fmt.Errorf("sqlite: creating world %q: %w", s.World, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: creating world %q: commit: %w", s.World, err)
	}
	return &driver.World{State: s, Home: home, DefaultTerm: defTerm, CreatedAt: fromMicros(created.UnixMicro())}, nil
}

type rejection struct {
	epoch  int64
	holder string
}

// JournalImport implements driver.Driver.
func (d *store) JournalImport(ctx context.Context, p *driver.JournalImportParams) (*driver.World, error) {
	imp, err := driver.PrepareImport(p)
	if err != nil {
		return nil, err
	}
	if err := imp.CheckTime(d.clock.Now()); err != nil {
		return nil, err
	}
	rs := make([]rejection, len(imp.Rejections))
	for i, r := range imp.Rejections {
		rs[i] = rejection{epoch: r.Epoch, holder: r.Holder}
	}
	return d.insertWorld(ctx, imp.Home, imp.DefaultTerm, imp.Final, p.Entries, rs)
}

// LeaseChange implements driver.Driver.
func (d *store) LeaseChange(ctx context.Context, p *driver.LeaseChangeParams) (*driver.World, error) {
	return d.change(ctx, p.World, p.Op, false, func(w *driver.World, now time.Time, _ *headQueries) (journal.Plan, error) {
		return p.Plan(w, now)
	})
}
