package server_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// TestDashboardRunListFilters: GET /v1/runs?owner= lists the runs the
// owner holds now and ?unique_key= the run holding the key, on both
// stores, paged and combined with the queue filter; a bad owner or an
// over-long key is refused, and a token that may read one queue may
// search it only by naming it.
func TestDashboardRunListFilters(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		d := dashboardFixture(t, b)
		var e enqueued
		b.post(t, "/v1/runs", map[string]any{"runs": []map[string]any{{"queue": "bills", "payload": json.RawMessage(`{}`), "unique_key": "invoice-42"}}}).ok(t, &e)
		keyed := e.Runs[0].Run
		second := b.claimOne(t, "mail", "worker-1") // worker-1 now holds two runs
		ids := func(path string) []int64 {
			t.Helper()
			var p struct {
				Runs []run
				Next string
			}
			b.get(t, path).ok(t, &p)
			out := []int64{}
			for _, r := range p.Runs {
				out = append(out, r.ID)
			}
			return out
		}
		require.Equal(t, []int64{d.held.ID, second.ID}, ids("/v1/runs?owner=worker-1"))
		require.Equal(t, []int64{d.held.ID}, ids("/v1/runs?owner=worker-1&limit=1"))
		require.Equal(t, []int64{second.ID}, ids("/v1/runs?owner=worker-1&after="+strconv.FormatInt(d.held.ID, 10)))
		require.Equal(t, []int64{}, ids("/v1/runs?owner=worker-1&queue=bills"))
		require.Equal(t, []int64{}, ids("/v1/runs?owner=nobody"))
		require.Equal(t, []int64{keyed.ID}, ids("/v1/runs?unique_key=invoice-42"))
		require.Equal(t, []int64{keyed.ID}, ids("/v1/runs?unique_key=invoice-42&queue=bills"))
		require.Equal(t, []int64{}, ids("/v1/runs?unique_key=invoice-42&queue=mail"))
		require.Equal(t, []int64{}, ids("/v1/runs?unique_key=invoice-43"))

		b.get(t, "/v1/runs?owner=a%20b").problem(t, "invalid")
		b.get(t, "/v1/runs?unique_key="+strings.Repeat("k", 257)).problem(t, "invalid")
		billsReader := b.as(t, b.mint(t, "read:queue:bills"))
		billsReader.get(t, "/v1/runs?unique_key=invoice-42").problem(t, "forbidden")
		var p struct{ Runs []run }
		billsReader.get(t, "/v1/runs?unique_key=invoice-42&queue=bills").ok(t, &p)
		require.Len(t, p.Runs, 1)
	})
}

// TestDashboardClockDoctor: GET /v1/stats/clock samples the store clock
// now and answers the doctor's figures on both stores: as many probes as
// asked, round trips in order, no step on a quiet clock, a write-behind
// verdict; out-of-range samples are refused, and like the health figures
// it needs read on every queue.
func TestDashboardClockDoctor(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		var d struct {
			Store           string
			Samples         int
			RateKnown       bool    `json:"rate_known"`
			RTTMin          float64 `json:"rtt_min_ms"`
			RTTMedian       float64 `json:"rtt_median_ms"`
			RTTMax          float64 `json:"rtt_max_ms"`
			Steps           []json.RawMessage
			WriteBehind     string `json:"write_behind"`
			LeaseMS, SkewMS int64
			SpanMS          float64 `json:"span_ms"`
			Refusal         string
		}
		b.get(t, "/v1/stats/clock?samples=5&every_ms=1").ok(t, &d)
		require.Equal(t, b.c.Driver().Name(), d.Store)
		require.Equal(t, 5, d.Samples)
		require.True(t, d.RateKnown, "five probes a millisecond apart give a rate")
		require.GreaterOrEqual(t, d.RTTMin, 0.0)
		require.LessOrEqual(t, d.RTTMin, d.RTTMedian)
		require.LessOrEqual(t, d.RTTMedian, d.RTTMax)
		require.Positive(t, d.SpanMS)
		require.Empty(t, d.Steps, "the store clock did not step")
		require.Contains(t, []string{"ok", "refused"}, d.WriteBehind)
		require.Equal(t, d.WriteBehind == "refused", d.Refusal != "")

		b.get(t, "/v1/stats/clock?samples=1").problem(t, "invalid")
		b.get(t, "/v1/stats/clock?samples=51").problem(t, "invalid")
		b.get(t, "/v1/stats/clock?every_ms=5000").problem(t, "invalid")
		b.as(t, b.mint(t, "read:queue:mail")).get(t, "/v1/stats/clock").problem(t, "forbidden")
	})
}

// TestDashboardHealthPoolsAndAlerts: GET /v1/stats/health carries the
// store's pools — Postgres's critical and general pools with their
// saturation, none on SQLite — and, on a quiet server, no alert.
func TestDashboardHealthPoolsAndAlerts(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		b.enqueue(t, "mail", `{}`)
		var h struct {
			Pools []struct {
				Name             string
				Max, Open, InUse int32
				Acquires         int64
				Saturation       float64
			}
			Alerts []struct{ Level, What, Detail string }
		}
		b.get(t, "/v1/stats/health").ok(t, &h)
		require.NotNil(t, h.Alerts)
		require.Empty(t, h.Alerts, "a quiet server has no alert")
		if b.c.Driver().Name() == "sqlite" {
			require.Empty(t, h.Pools)
			return
		}
		var names []string
		for _, p := range h.Pools {
			names = append(names, p.Name)
			require.Positive(t, p.Max, p.Name)
			require.GreaterOrEqual(t, p.Saturation, 0.0)
			require.LessOrEqual(t, p.Saturation, 1.0)
		}
		require.Len(t, names, 2, "Postgres's critical and general pools: %v", names)
	})
}
