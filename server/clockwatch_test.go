package server_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
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

// offsetClock is the real clock plus an offset the test steps: a store
// whose clock moves at runtime (SQLite's injected Clock; Postgres's
// StoreClock, taken as every statement's now).
type offsetClock struct {
	clock.Clock
	off atomic.Int64
}

func (c *offsetClock) Now() time.Time { return c.Clock.Now().Add(time.Duration(c.off.Load())) }

// TestTheServerShrinksTheRunwayItVouchesForWhenTheStoreClockSteps: a
// remote runner's claim and renewals teach the server the store's time;
// when the store clock steps 30s forward (S 15s) the server logs it,
// counts it, and the runway_ms it vouches for drops by the move beyond S —
// on both stores.
func TestTheServerShrinksTheRunwayItVouchesForWhenTheStoreClockSteps(t *testing.T) {
	t.Parallel()
	for _, st := range []struct {
		name string
		open func(t *testing.T, c clock.Clock) leasehold.Driver
	}{
		{"sqlite", func(t *testing.T, c clock.Clock) leasehold.Driver {
			d, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db"), Clock: c})
			require.NoError(t, err)
			return d
		}},
		{"postgres", func(t *testing.T, c clock.Clock) leasehold.Driver {
			url, schema := testdb.Schema(t)
			d, err := postgres.Open(context.Background(), postgres.Config{URL: url, Schema: schema, StoreClock: c, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			return d
		}},
	} {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			sc := &offsetClock{Clock: clock.Real()}
			logs := &lockedBuffer{}
			b := setup(t, func(t *testing.T) leasehold.Driver { return st.open(t, sc) },
				leasehold.Config{}, server.Config{Logger: slog.New(slog.NewTextHandler(logs, nil))})
			b.enqueue(t, "q", `{}`)
			r := b.claimOne(t, "q", "runner-1")
			var renewed struct {
				RunwayMS int64 `json:"runway_ms"`
			}
			b.post(t, runPath(r.ID, "/renew"), map[string]any{"fence": r.Fence, "owner": "runner-1"}).ok(t, &renewed)
			// T_lease 90s − S 15s, less the round trip.
			require.Greater(t, renewed.RunwayMS, int64(74000))

			sc.off.Store(int64(30 * time.Second))
			// Remote renewals are write-behind (no store call): the next
			// round trip that reads the store's clock — here another
			// claim; in time the keeper's drain — is what sees the step.
			b.enqueue(t, "q", `{}`)
			b.claimOne(t, "q", "runner-2")
			b.post(t, runPath(r.ID, "/renew"), map[string]any{"fence": r.Fence, "owner": "runner-1"}).ok(t, &renewed)
			// 15s beyond S come off, and the probes' round trips at most.
			require.Less(t, renewed.RunwayMS, int64(60000))
			require.Greater(t, renewed.RunwayMS, int64(55000))
			require.Contains(t, logs.String(), "store clock moved beyond S within one term")
			require.Contains(t, logs.String(), "what=step")
			metrics := string(b.get(t, "/metrics").body)
			require.Contains(t, metrics, `leasehold_server_store_clock_alarms_total{what="step"} 1`)
			require.Contains(t, metrics, "leasehold_server_store_clock_runway_cut_seconds 15.")
			require.False(t, strings.Contains(metrics, `leasehold_server_store_clock_alarms_total{what="drift"} 1`))
			// The dashboard's health page says the same.
			var h healthReply
			b.get(t, "/v1/stats/health").ok(t, &h)
			require.True(t, h.Clock.Alarm)
			require.Equal(t, int64(1), h.Clock.Steps)
			require.Zero(t, h.Clock.Drifts)
			require.InDelta(t, 15_000, h.Clock.RunwayCutMS, 1_000)
		})
	}
}
