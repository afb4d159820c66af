package drivertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
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
