package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/journal"
)

// forEachDriver runs fn against a fresh, migrated store of each driver.
func forEachDriver(t *testing.T, fn func(t *testing.T, d driver.Driver)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, openSQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, openPostgres(t))
	})
}

func openSQLite(tb testing.TB) driver.Driver {
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(tb.TempDir(), "lh.db")})
	require.NoError(tb, err)
	tb.Cleanup(func() { d.Close() })
	_, err = d.Migrate(ctx)
	require.NoError(tb, err)
	return d
}

func openPostgres(tb testing.TB) driver.Driver {
	ctx := context.Background()
	url, schema := testdb.Schema(tb)
	d, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: schema})
	require.NoError(tb, err)
	tb.Cleanup(func() { d.Close() })
	_, err = d.Migrate(ctx)
	require.NoError(tb, err)
	return d
}

// newHost starts a host for node on d; it is stopped when the test ends.
func newHost(t testing.TB, d host.Store, node string, p host.Program, tweak ...func(*host.Config)) *host.Host {
	cfg := host.Config{Store: d, Node: node, Program: p}
	for _, f := range tweak {
		f(&cfg)
	}
	h, err := host.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, h.Stop(ctx))
	})
	return h
}

func createWorld(t testing.TB, d driver.Driver, w, home string) {
	_, err := d.WorldCreate(context.Background(), &driver.WorldCreateParams{World: w, Home: home, Term: 30 * time.Second})
	require.NoError(t, err)
}

func deposit(account string, n int) host.Command {
	return host.Command{Key: fmt.Sprintf("dep-%s-%d", account, n),
		Payload: json.RawMessage(fmt.Sprintf(`{"op":"deposit","account":%q,"amount":%d}`, account, n))}
}

// journalOf reads a world's whole journal.
func journalOf(t testing.TB, d driver.Driver, w string) []journal.Entry {
	var all []journal.Entry
	for from := int64(1); ; {
		es, err := d.JournalRead(context.Background(), &driver.JournalReadParams{World: w, From: from, Limit: 10_000})
		require.NoError(t, err)
		all = append(all, es...)
		if len(es) < 10_000 {
			return all
		}
		from = es[len(es)-1].Position + 1
	}
}

// turnKeys counts each command key among the journal's turn entries.
func turnKeys(es []journal.Entry) map[string]int {
	n := map[string]int{}
	for _, e := range es {
		if e.Kind == host.TurnKind {
			n[e.Key]++
		}
	}
	return n
}

// auditOK asserts the journal audits clean: one holder per position.
func auditOK(t testing.TB, es []journal.Entry) {
	rep := journal.Audit(es)
	require.True(t, rep.OK(), "audit: %+v", rep.Violation)
}
