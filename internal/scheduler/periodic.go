package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/internal/startstop"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// MissedPolicy says what a periodic schedule does with ticks that passed
// while no process could enqueue them (all were down, the store was
// unreachable, the process stalled).
type MissedPolicy int

const (
	// MissedSkip (the default) drops missed ticks: the next run is the
	// next tick to come.
	MissedSkip MissedPolicy = iota
	// MissedCatchUpOne enqueues the latest missed tick, once, as soon as
	// a process can (at start or when it finds itself late), then goes
	// on with the next tick; older missed ticks are dropped.
	MissedCatchUpOne
)

// Periodic is one schedule: a cron expression or a fixed interval, and
// the run enqueued at each tick.
type Periodic struct {
	// Name identifies the schedule across processes: every tick's run
	// carries the unique key "periodic:<Name>:<tick>" (TickLayout). An
	// identifier (A-Z a-z 0-9 . _ : @ / -).
	Name string
	// Cron is a cron expression: five fields (minute hour day month
	// weekday), or six with seconds first, or a descriptor (@hourly,
	// @daily, @every 90m); times in UTC unless it starts with CRON_TZ=.
	Cron string
	// Every is a fixed interval instead of Cron, its ticks aligned to the
	// Unix epoch (every 1h: on the hour, UTC), so every process computes
	// the same ticks.
	Every time.Duration
	// Run is what each tick enqueues (Queue, Payload, Priority,
	// MaxAttempts). Its UniqueKey, UniqueStates, UniquePeriod and Delay
	// must be unset: the schedule sets the key.
	Run runs.Enqueue
	// RunOnStart enqueues, when the service starts, the schedule's latest
	// tick at or before now, unless a run of that tick exists already —
	// the schedule runs at once after a deploy without waiting for its
	// next tick, and still once per tick across processes.
	RunOnStart bool
	// Missed is the policy for ticks missed while nothing enqueued them.
	Missed MissedPolicy
}

// MinEvery bounds a fixed interval: below it a schedule is a busy loop.
const MinEvery = 100 * time.Millisecond

// cronParser accepts five fields, an optional leading seconds field, and
// the descriptors.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// schedule is a parsed Periodic: Next is the first tick strictly after t.
type schedule interface{ Next(t time.Time) time.Time }

type every time.Duration

func (e every) Next(t time.Time) time.Time {
	d := int64(time.Duration(e) / time.Microsecond)
	us := t.UnixMicro()
	us -= ((us % d) + d) % d // down to a multiple of d since the Unix epoch
	return time.UnixMicro(us + d).UTC()
}

// parse checks p (field names prefixed by field) and returns its
// schedule.
func (p *Periodic) parse(field string) (schedule, error) {
	bad := func(sub, format string, args ...any) error {
		return &journal.InputError{Field: field + "." + sub, Problem: fmt.Sprintf(format, args...)}
	}
	if err := journal.ValidateID(field+".name", p.Name); err != nil {
		return nil, err
	}
	if p.Run.UniqueKey != "" || p.Run.UniqueStates != nil || p.Run.UniquePeriod != 0 || p.Run.Delay != 0 {
		return nil, bad("run", "the unique key, its scope and the delay are the schedule's: leave them unset")
	}
	r := p.Run
	if err := runs.ValidateEnqueue(&r); err != nil {
		return nil, fmt.Errorf("%s.run: %w", field, err)
	}
	if p.Missed != MissedSkip && p.Missed != MissedCatchUpOne {
		return nil, bad("missed", "%d is not a missed-tick policy", p.Missed)
	}
	switch {
	case p.Cron != "" && p.Every != 0:
		return nil, bad("cron", "set cron or every, not both")
	case p.Cron != "":
		s, err := cronParser.Parse(p.Cron)
		if err != nil {
			return nil, bad("cron", "%q does not parse: %v", p.Cron, err)
		}
		return s, nil
	case p.Every < MinEvery || p.Every > runs.MaxDelay || p.Every%time.Microsecond != 0:
		return nil, bad("every", "%s is outside %s..%s (or set cron)", p.Every, MinEvery, runs.MaxDelay)
	default:
		return every(p.Every), nil
	}
}

// ValidatePeriodic checks a set of schedules: each valid, names distinct.
func ValidatePeriodic(ps []Periodic) error {
	seen := map[string]bool{}
	for i := range ps {
		field := fmt.Sprintf("periodic[%d]", i)
		if _, err := ps[i].parse(field); err != nil {
			return err
		}
		if seen[ps[i].Name] {
			return &journal.InputError{Field: field + ".name", Problem: fmt.Sprintf("%q is declared twice", ps[i].Name)}
		}
		seen[ps[i].Name] = true
	}
	return nil
}

// TickLayout formats a tick in its unique key: RFC 3339 in UTC with six
// fixed decimals, so keys sort in tick order.
const TickLayout = "2006-01-02T15:04:05.000000Z07:00"

// TickKey is the unique key of a schedule's run for one tick.
func TickKey(name string, tick time.Time) string {
	return "periodic:" + name + ":" + tick.UTC().Format(TickLayout)
}

// prevTick is the latest tick of s at or before now (zero if none within
// five years), searched by widening windows so that a dense schedule
// steps through few ticks.
func prevTick(s schedule, now time.Time) time.Time {
	for _, w := range []time.Duration{time.Minute, time.Hour, 24 * time.Hour, 32 * 24 * time.Hour, 366 * 24 * time.Hour, 5 * 366 * 24 * time.Hour} {
		t := s.Next(now.Add(-w))
		if t.IsZero() || t.After(now) {
			continue
		}
		for {
			n := s.Next(t)
			if n.IsZero() || n.After(now) {
				return t
			}
			t = n
		}
	}
	return time.Time{}
}

// PeriodicConfig configures the periodic service.
type PeriodicConfig struct {
	Schedules []Periodic
	// MaxCatchUp bounds how old a tick RunOnStart or MissedCatchUpOne
	// may still enqueue (0: no bound): the client sets the shortest
	// retention, past which a tick's run may have been deleted by the
	// cleaner and would otherwise run a second time.
	MaxCatchUp time.Duration
	Clock      clock.Clock
	Runtime    rt.Runtime
	Logger     *slog.Logger
	// OnEnqueue, if set, is called after every tick's enqueue (tests).
	OnEnqueue func(name string, tick time.Time, inserted bool, err error)
}

// PeriodicService enqueues each schedule's runs, one per tick across any
// number of processes: every process enqueues every tick under the
// tick's unique key (held in every state), so the store keeps exactly one
// — no leader, nothing remembered in memory.
type PeriodicService struct {
	enq   func(ctx context.Context, e runs.Enqueue) (driver.RunEnqueued, error)
	cfg   PeriodicConfig
	sched []schedule
	life  startstop.Lifecycle
}

// NewPeriodic returns a stopped service; cfg.Schedules must be valid
// (ValidatePeriodic). enq enqueues one run.
func NewPeriodic(enq func(ctx context.Context, e runs.Enqueue) (driver.RunEnqueued, error), cfg PeriodicConfig) (*PeriodicService, error) {
	if err := ValidatePeriodic(cfg.Schedules); err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Runtime == nil {
		cfg.Runtime = rt.Real(cfg.Clock)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	p := &PeriodicService{enq: enq, cfg: cfg}
	for i := range cfg.Schedules {
		s, _ := cfg.Schedules[i].parse("")
		p.sched = append(p.sched, s)
	}
	p.life.Name = "periodic"
	p.life.RT = cfg.Runtime
	return p, nil
}

// enqueueTick enqueues schedule i's run for tick, retrying a failed
// enqueue a few times within the tick (the key makes a retry safe).
func (p *PeriodicService) enqueueTick(ctx context.Context, i int, tick time.Time) {
	sc := &p.cfg.Schedules[i]
	e := sc.Run
	e.UniqueKey, e.UniqueStates = TickKey(sc.Name, tick), runs.AllStates()
	var (
		got driver.RunEnqueued
		err error
	)
	for try, wait := 0, 50*time.Millisecond; try < 4; try, wait = try+1, wait*2 {
		if got, err = p.enq(ctx, e); err == nil || ctx.Err() != nil {
			break
		}
		p.cfg.Logger.Warn("periodic enqueue failed; retrying", "schedule", sc.Name, "tick", tick, "err", err)
		if !rt.Sleep(p.cfg.Runtime, ctx, wait) {
			break
		}
	}
	if err == nil && !got.Existing {
		p.cfg.Logger.Info("periodic run enqueued", "schedule", sc.Name, "tick", tick, "run", got.Run.ID)
	}
	if p.cfg.OnEnqueue != nil {
		p.cfg.OnEnqueue(sc.Name, tick, err == nil && !got.Existing, err)
	}
}

// catchUp enqueues schedule i's latest tick at or before now if it is
// not older than MaxCatchUp, and returns it (zero if none).
func (p *PeriodicService) catchUp(ctx context.Context, i int, now time.Time) time.Time {
	t := prevTick(p.sched[i], now)
	if t.IsZero() || (p.cfg.MaxCatchUp > 0 && now.Sub(t) >= p.cfg.MaxCatchUp) {
		return time.Time{}
	}
	p.enqueueTick(ctx, i, t)
	return t
}

// loop runs schedule i until ctx ends.
func (p *PeriodicService) loop(ctx context.Context, i int) {
	sc, s, c := &p.cfg.Schedules[i], p.sched[i], p.cfg.Clock
	now := c.Now()
	if sc.RunOnStart || sc.Missed == MissedCatchUpOne {
		p.catchUp(ctx, i, now)
	}
	next := s.Next(now)
	for !next.IsZero() {
		if p.cfg.Runtime.Wait(ctx, nil, max(next.Sub(c.Now()), 0)) == rt.Done {
			return
		}
		p.enqueueTick(ctx, i, next)
		now = c.Now()
		following := s.Next(next)
		if following.IsZero() || following.After(now) {
			next = following
			continue
		}
		// Late: ticks passed while this one was enqueued (or the process
		// stalled). Skip drops them; catch-up enqueues the latest. Either
		// way this process passed some over, and says which: another
		// process may have enqueued them, and if none did the operator
		// (and the process test) can tell a policy's gap from a lost tick.
		through := prevTick(s, now)
		if sc.Missed == MissedCatchUpOne {
			if caught := p.catchUp(ctx, i, now); !caught.IsZero() {
				through = prevTick(s, caught.Add(-time.Nanosecond))
			}
		}
		if !through.Before(following) {
			p.cfg.Logger.Warn("periodic ticks passed over", "schedule", sc.Name, "from", following, "through", through)
		}
		next = s.Next(now)
	}
}

// Start runs every schedule until Stop or ctx ends. Idempotent; after
// Stop it returns startstop.ErrStopped.
func (p *PeriodicService) Start(ctx context.Context) error {
	return p.life.Start(ctx, func(ctx context.Context) error {
		for i := range p.sched {
			p.life.Go("periodic "+p.cfg.Schedules[i].Name, func() { p.loop(ctx, i) })
		}
		return nil
	})
}

// Stop stops the schedules and waits for them until ctx ends.
func (p *PeriodicService) Stop(ctx context.Context) error { return p.life.Stop(ctx, nil) }

// Started is closed once the schedules run.
func (p *PeriodicService) Started() <-chan struct{} { return p.life.Started() }

// Stopped is closed once every schedule's loop has returned.
func (p *PeriodicService) Stopped() <-chan struct{} { return p.life.Stopped() }

// Ticks returns, for schedule p (validated), its latest tick at or before
// from (zero if none within five years) and its next n ticks after from —
// what an operator checks a schedule with (`leasehold periodic`).
func Ticks(p Periodic, from time.Time, n int) (last time.Time, next []time.Time, err error) {
	s, err := p.parse("periodic")
	if err != nil {
		return time.Time{}, nil, err
	}
	last = prevTick(s, from)
	for t := from; len(next) < n; {
		if t = s.Next(t); t.IsZero() {
			break
		}
		next = append(next, t)
	}
	return last, next, nil
}
