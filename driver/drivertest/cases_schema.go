package drivertest

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

var schemaCases = []Case{
	{"MigrateIsIdempotent", func(t *testing.T, f Factory) {
		e := newEnv(t, f) // the factory has migrated once
		res, err := e.d.Migrate(e.ctx)
		require.NoError(t, err)
		require.Empty(t, res.Applied)
		require.Positive(t, res.Version)
	}},
	{"MigrateRefusesNewerSchema", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		require.NoError(t, e.h.Exec(e.ctx, `INSERT INTO leasehold_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', `+e.nowSQL()+`)`))
		_, err := e.d.Migrate(e.ctx)
		require.ErrorIs(t, err, driver.ErrSchemaTooNew)
		require.ErrorContains(t, err, "schema version 9999, this binary knows up to ", "names both versions")
	}},
	{"ConcurrentMigratorsApplyEachMigrationOnce", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		if e.h.OpenEmpty == nil { // a skip here would prove nothing: every harness must offer it
			t.Fatal("the driver's harness has no OpenEmpty: concurrent migrators cannot be checked")
		}
		open := e.h.OpenEmpty(t)
		const n = 4
		applied := make(chan []int, n)
		var latest atomic.Int64
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				d, err := open(e.ctx)
				if !assert.NoError(t, err) {
					return
				}
				defer d.Close()
				res, err := d.Migrate(e.ctx)
				if !assert.NoError(t, err) {
					return
				}
				latest.Store(int64(res.Version))
				applied <- res.Applied
			})
		}
		wg.Wait()
		close(applied)
		var all []int
		for a := range applied {
			all = append(all, a...)
		}
		slices.Sort(all)
		// Versions need not be contiguous (a number may be reserved for a
		// change in flight): each is applied once, the last is the
		// schema's version, and none is left pending.
		require.Equal(t, slices.Compact(slices.Clone(all)), all, "each migration applied exactly once: %v", all)
		require.Equal(t, int(latest.Load()), all[len(all)-1], "applied %v", all)
		d, err := open(e.ctx)
		require.NoError(t, err)
		defer d.Close()
		require.NoError(t, d.SchemaCheck(e.ctx), "every embedded migration applied: %v", all)
	}},
	{"SchemaCheckTypesAMissingOrOlderSchema", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		require.NoError(t, e.d.SchemaCheck(e.ctx), "migrated by the factory")
		if e.h.OpenEmpty == nil {
			t.Fatal("the driver's harness has no OpenEmpty: an unmigrated store cannot be checked")
		}
		d, err := e.h.OpenEmpty(t)(e.ctx)
		require.NoError(t, err)
		defer d.Close()
		for range 2 { // twice: the check creates nothing
			err = d.SchemaCheck(e.ctx)
			require.ErrorIs(t, err, driver.ErrNotMigrated)
			require.ErrorContains(t, err, "store not migrated: run `leasehold migrate`")
		}
		res, err := d.Migrate(e.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, res.Applied[0], "every migration still to apply")
		require.NoError(t, d.SchemaCheck(e.ctx))

		// Behind: the last migration unrecorded. Ahead: a newer binary's.
		require.NoError(t, e.h.Exec(e.ctx, `DELETE FROM leasehold_migrations WHERE version = (SELECT max(version) FROM leasehold_migrations)`))
		require.ErrorIs(t, e.d.SchemaCheck(e.ctx), driver.ErrNotMigrated)
		require.NoError(t, e.h.Exec(e.ctx, `INSERT INTO leasehold_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', `+e.nowSQL()+`)`))
		require.ErrorIs(t, e.d.SchemaCheck(e.ctx), driver.ErrSchemaTooNew)
	}},
	{"CallsOnAnUnmigratedStoreAreTyped", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		if e.h.OpenEmpty == nil {
			t.Fatal("the driver's harness has no OpenEmpty: an unmigrated store cannot be checked")
		}
		d, err := e.h.OpenEmpty(t)(e.ctx)
		require.NoError(t, err)
		defer d.Close()
		rs, ok := d.(driver.RunStore)
		require.True(t, ok)
		es, ok := d.(driver.EffectStore)
		require.True(t, ok)
		calls := map[string]func() error{
			"WorldGet":  func() error { _, err := d.WorldGet(e.ctx, &driver.WorldGetParams{World: "w"}); return err },
			"WorldList": func() error { _, err := d.WorldList(e.ctx, &driver.WorldListParams{}); return err },
			"WorldCreate": func() error {
				_, err := d.WorldCreate(e.ctx, &driver.WorldCreateParams{World: "w", Home: "h", Term: term})
				return err
			},
			"JournalRead": func() error {
				_, err := d.JournalRead(e.ctx, &driver.JournalReadParams{World: "w", From: 1})
				return err
			},
			"JournalAppend": func() error {
				out, err := d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: "w", Requests: []journal.AppendRequest{{Holder: "h", Epoch: 1, SeenPosition: 1, Kind: "note"}}})
				if err == nil && len(out) == 1 {
					err = out[0].Err
				}
				return err
			},
			"RunEnqueue": func() error {
				_, err := rs.RunEnqueue(e.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}}})
				return err
			},
			"RunGet": func() error { _, err := rs.RunGet(e.ctx, &driver.RunGetParams{ID: 1}); return err },
			"RunClaim": func() error {
				_, err := rs.RunClaim(e.ctx, &driver.RunClaimParams{Queue: "q", Owner: "a", Limit: 1, Lease: runLease})
				return err
			},
			"RunReclaim":   func() error { _, err := rs.RunReclaim(e.ctx, &driver.RunReclaimParams{}); return err },
			"RunEventList": func() error { _, err := es.RunEventList(e.ctx, &driver.RunEventListParams{RunID: 1}); return err },
			"RunEffectList": func() error {
				_, err := es.RunEffectList(e.ctx, &driver.RunEffectListParams{RunID: 1})
				return err
			},
		}
		for name, call := range calls {
			err := call()
			require.ErrorIs(t, err, driver.ErrNotMigrated, "%s on an unmigrated store: %v", name, err)
		}
	}},
	{"SettingsAreDurable", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		s, err := e.d.Settings(e.ctx)
		require.NoError(t, err)
		switch s.Driver {
		case "sqlite":
			require.Equal(t, "wal", s.Values["journal_mode"])
			require.Equal(t, "2 (FULL)", s.Values["synchronous"])
		case "postgres":
			require.Equal(t, "on", s.Values["synchronous_commit"])
			require.Equal(t, "on", s.Values["fsync"])
		default:
			t.Fatalf("unknown driver %q", s.Driver)
		}
	}},
}

// nowSQL is an applied_at value valid in either driver's migrations table.
func (e *env) nowSQL() string {
	if e.d.Name() == "postgres" {
		return "now()"
	}
	return "0"
}
