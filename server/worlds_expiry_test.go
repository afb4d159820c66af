package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/server"
)

// TestAnExpiredWorldLeaseIsLost: once the store clock passes a world
// lease's expiry, its holder's renew and append are refused lease-lost
// (reason expired) on both stores — an expired lease is never revived —
// and no data entry is written.
func TestAnExpiredWorldLeaseIsLost(t *testing.T) {
	t.Parallel()
	for _, st := range []struct {
		name string
		open func(t *testing.T, clk clock.Clock) leasehold.Driver
	}{
		{"sqlite", func(t *testing.T, clk clock.Clock) leasehold.Driver {
			d, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db"), Clock: clk})
			require.NoError(t, err)
			return d
		}},
		{"postgres", func(t *testing.T, clk clock.Clock) leasehold.Driver {
			url, schema := testdb.Schema(t)
			d, err := postgres.Open(context.Background(), postgres.Config{URL: url, Schema: schema, StoreClock: clk, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			return d
		}},
	} {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			storeClock := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
			b := setup(t, func(t *testing.T) leasehold.Driver { return st.open(t, storeClock) }, leasehold.Config{}, server.Config{})
			var w worldReply
			b.post(t, "/v1/worlds", map[string]any{"world": "w1", "home": "node-a"}).ok(t, &w)
			storeClock.Advance(time.Hour) // far past the term (no sweep runs here to grant it home)
			before := b.world(t, "w1")
			p := b.post(t, worldPath("w1", "/renew"), map[string]any{"holder": "node-a", "epoch": 1}).problem(t, "lease-lost")
			require.Equal(t, http.StatusConflict, p.Status)
			p = b.post(t, worldPath("w1", "/append"), map[string]any{"holder": "node-a", "epoch": 1, "seen_position": 1, "entries": entries(`{"n":1}`)}).problem(t, "lease-lost")
			require.Equal(t, "expired", p.Reason)
			after := b.world(t, "w1")
			require.Equal(t, before.Epoch, after.Epoch)
			require.Equal(t, before.Holder, after.Holder)
			require.NotContains(t, b.worldSnapshot(t, "w1"), `"n":1`)
		})
	}
}
