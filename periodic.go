package leasehold

import (
	"context"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/runs"
)

// PeriodicRun is one periodic schedule of Config.Periodic: Name, a Cron
// expression (five fields, six with seconds first, or a descriptor such
// as @daily or @every 90m; UTC unless it starts with CRON_TZ=) or a fixed
// interval Every (ticks aligned to the Unix epoch, so every process
// computes the same ones), the Run each tick enqueues, RunOnStart and the
// Missed policy.
//
// Exactly one run per tick, across any number of processes declaring the
// same schedule: every process enqueues every tick under the tick's
// unique key "periodic:<Name>:<tick>" (RFC 3339 UTC, six decimals: keys
// sort in tick order), held in every state,
// and the store keeps the first — no leader, no memory. Missed ticks
// (every process down, the store unreachable): MissedSkip (the default)
// drops them; MissedCatchUpOne enqueues the latest one, once, when a
// process can. RunOnStart enqueues the latest tick at or before the start
// unless it has a run already. Neither reaches back further than the
// shortest non-zero Retention, past which a tick's run may have been
// cleaned and would run twice.
type PeriodicRun = scheduler.Periodic

// MissedPolicy is what a schedule does with ticks nobody could enqueue.
type MissedPolicy = scheduler.MissedPolicy

// The missed-tick policies.
const (
	MissedSkip       = scheduler.MissedSkip
	MissedCatchUpOne = scheduler.MissedCatchUpOne
)

// PeriodicKey is the unique key of schedule name's run for tick.
func PeriodicKey(name string, tick time.Time) string { return scheduler.TickKey(name, tick) }

func (c *Client) newPeriodic() (*scheduler.PeriodicService, error) {
	var maxCatchUp time.Duration
	ret := c.cfg.retention()
	for _, d := range []time.Duration{ret.Completed, ret.Failed, ret.Cancelled} {
		if d > 0 && (maxCatchUp == 0 || d < maxCatchUp) {
			maxCatchUp = d
		}
	}
	return scheduler.NewPeriodic(func(ctx context.Context, e runs.Enqueue) (driver.RunEnqueued, error) {
		out, err := c.Enqueue(ctx, e)
		if err != nil {
			return driver.RunEnqueued{}, err
		}
		return out[0], nil
	}, scheduler.PeriodicConfig{Schedules: c.cfg.Periodic, MaxCatchUp: maxCatchUp, Clock: c.cfg.Clock, Logger: c.cfg.Logger})
}

// StartPeriodic runs Config.Periodic's schedules until Close. Start it on
// every process that should enqueue them (any number: each tick still
// gets one run). Idempotent; ErrClosed after Close.
func (c *Client) StartPeriodic(ctx context.Context) error { return c.periodic.Start(ctx) }

// PeriodicTicks returns schedule p's latest tick at or before from (zero
// if none within five years) and its next n ticks after from; a schedule
// that does not parse is refused as NewClient refuses it.
func PeriodicTicks(p PeriodicRun, from time.Time, n int) (last time.Time, next []time.Time, err error) {
	return scheduler.Ticks(p, from, n)
}
