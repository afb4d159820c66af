package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

func TestPeriodicValidationNamesTheField(t *testing.T) {
	ok := Periodic{Name: "nightly", Cron: "0 3 * * *", Run: runs.Enqueue{Queue: "q"}}
	for _, c := range []struct {
		p     Periodic
		field string
	}{
		{Periodic{Name: "a", Cron: "61 * * * *", Run: ok.Run}, "periodic[1].cron"},
		{Periodic{Name: "a", Cron: "not cron", Run: ok.Run}, "periodic[1].cron"},
		{Periodic{Name: "a", Cron: "* * * * *", Every: time.Minute, Run: ok.Run}, "periodic[1].cron"},
		{Periodic{Name: "a", Every: time.Millisecond, Run: ok.Run}, "periodic[1].every"},
		{Periodic{Name: "a", Run: ok.Run}, "periodic[1].every"},
		{Periodic{Name: "bad name", Every: time.Minute, Run: ok.Run}, "periodic[1].name"},
		{Periodic{Name: "nightly", Every: time.Minute, Run: ok.Run}, "periodic[1].name"},
		{Periodic{Name: "a", Every: time.Minute, Run: runs.Enqueue{Queue: "q", UniqueKey: "k"}}, "periodic[1].run"},
		{Periodic{Name: "a", Every: time.Minute, Run: runs.Enqueue{Queue: "q", Delay: time.Second}}, "periodic[1].run"},
		{Periodic{Name: "a", Every: time.Minute, Run: runs.Enqueue{Queue: "q", Payload: []byte(`{`)}}, "payload"},
		{Periodic{Name: "a", Every: time.Minute, Run: ok.Run, Missed: 7}, "periodic[1].missed"},
	} {
		err := ValidatePeriodic([]Periodic{ok, c.p})
		var ie *journal.InputError
		require.True(t, errors.As(err, &ie), "%+v: %v", c.p, err)
		require.Equal(t, c.field, ie.Field, "%v", err)
	}
	require.NoError(t, ValidatePeriodic([]Periodic{ok, {Name: "sec", Cron: "*/5 * * * * *", Run: ok.Run},
		{Name: "d", Cron: "@daily", Run: ok.Run}, {Name: "e", Every: 90 * time.Minute, Run: ok.Run}}))
}

func TestPeriodicTicks(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 17, 30, 0, time.UTC)
	require.Equal(t, time.Date(2026, 12, 2, 10, 30, 0, 0, time.UTC), every(15*time.Minute).Next(at))
	require.Equal(t, time.Date(2026, 12, 2, 10, 45, 0, 0, time.UTC), every(15*time.Minute).Next(at.Add(12*time.Minute+30*time.Second)),
		"strictly after: a time on a tick gives the next one")
	require.Equal(t, time.Date(2026, 12, 2, 10, 15, 0, 0, time.UTC), prevTick(every(15*time.Minute), at))
	require.Equal(t, at, prevTick(every(30*time.Second), at), "a time on a tick is its own latest tick")
	s, err := cronParser.Parse("0 3 * * *")
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC), prevTick(s, at))
	y, err := cronParser.Parse("0 0 1 1 *")
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), prevTick(y, at), "a yearly schedule's last tick")
	require.Equal(t, "periodic:n:2026-12-02T10:17:30.000000Z", TickKey("n", at))
}

// periodicHarness runs a PeriodicService on a fake clock over an
// in-memory key set standing in for the store's unique index.
type periodicHarness struct {
	clk    *clock.Fake
	passed chan string // "periodic ticks passed over" log lines
	mu     sync.Mutex
	keys   map[string]bool
	ticks  chan time.Time // every inserted tick
}

func newPeriodicHarness(t *testing.T, start time.Time, p Periodic, maxCatchUp time.Duration, taken ...string) (*periodicHarness, *PeriodicService) {
	h := &periodicHarness{clk: clock.NewFake(start), keys: map[string]bool{}, ticks: make(chan time.Time, 100),
		passed: make(chan string, 10)}
	for _, k := range taken {
		h.keys[k] = true
	}
	svc, err := NewPeriodic(func(_ context.Context, e runs.Enqueue) (driver.RunEnqueued, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		existing := h.keys[e.UniqueKey]
		h.keys[e.UniqueKey] = true
		return driver.RunEnqueued{Run: &driver.Run{ID: 1, UniqueKey: e.UniqueKey}, Existing: existing}, nil
	}, PeriodicConfig{Schedules: []Periodic{p}, MaxCatchUp: maxCatchUp, Clock: h.clk,
		Logger: slog.New(LogSignals{"periodic ticks passed over": h.passed}),
		OnEnqueue: func(_ string, tick time.Time, inserted bool, err error) {
			if inserted && err == nil {
				h.ticks <- tick
			}
		}})
	require.NoError(t, err)
	require.NoError(t, svc.Start(context.Background()))
	t.Cleanup(func() { _ = svc.Stop(context.Background()) })
	return h, svc
}

func (h *periodicHarness) next(t *testing.T) time.Time {
	t.Helper()
	select {
	case tk := <-h.ticks:
		return tk
	case <-time.After(10 * time.Second):
		t.Fatal("no tick enqueued")
		return time.Time{}
	}
}

// passedOver returns the "passed over" line logged already (none: fail).
func (h *periodicHarness) passedOver(t *testing.T) string {
	t.Helper()
	select {
	case s := <-h.passed:
		return s
	default:
		t.Fatal("no ticks said to be passed over")
		return ""
	}
}

func (h *periodicHarness) none(t *testing.T) {
	t.Helper()
	h.clk.BlockUntil(1) // the loop waits for its next tick: nothing more is coming now
	select {
	case tk := <-h.ticks:
		t.Fatalf("unexpected tick %s", tk)
	default:
	}
}

func TestPeriodicRunOnStartAndTicksOnTheFakeClock(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 17, 30, 0, time.UTC)
	p := Periodic{Name: "n", Every: time.Minute, RunOnStart: true, Run: runs.Enqueue{Queue: "q"}}
	h, _ := newPeriodicHarness(t, start, p, 0)
	require.Equal(t, start.Truncate(time.Minute), h.next(t), "run on start: the latest tick")
	h.none(t)
	h.clk.Advance(30 * time.Second)
	require.Equal(t, start.Truncate(time.Minute).Add(time.Minute), h.next(t))
	h.none(t)
}

func TestPeriodicRunOnStartSkipsATickAlreadyEnqueued(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 17, 30, 0, time.UTC)
	p := Periodic{Name: "n", Every: time.Minute, RunOnStart: true, Run: runs.Enqueue{Queue: "q"}}
	h, _ := newPeriodicHarness(t, start, p, 0, TickKey("n", start.Truncate(time.Minute)))
	h.none(t)
}

func TestPeriodicMissedTicks(t *testing.T) {
	start := time.Date(2026, 12, 2, 10, 17, 30, 0, time.UTC)
	skip := Periodic{Name: "n", Every: time.Minute, Run: runs.Enqueue{Queue: "q"}}
	h, _ := newPeriodicHarness(t, start, skip, 0)
	h.none(t)                       // skip: nothing at start
	h.clk.Advance(10 * time.Minute) // the process stalled through ten ticks
	require.Equal(t, time.Date(2026, 12, 2, 10, 18, 0, 0, time.UTC), h.next(t), "the tick it was waiting for")
	h.none(t) // the nine after it are dropped, and said to be
	require.Equal(t, "periodic ticks passed over schedule=n from=2026-12-02 10:19:00 +0000 UTC through=2026-12-02 10:27:00 +0000 UTC", h.passedOver(t))
	h.clk.Advance(time.Minute)
	require.Equal(t, time.Date(2026, 12, 2, 10, 28, 0, 0, time.UTC), h.next(t))

	catch := Periodic{Name: "c", Every: time.Minute, Missed: MissedCatchUpOne, Run: runs.Enqueue{Queue: "q"}}
	h2, _ := newPeriodicHarness(t, start, catch, 0)
	require.Equal(t, time.Date(2026, 12, 2, 10, 17, 0, 0, time.UTC), h2.next(t), "catch up one at start")
	h2.none(t)
	h2.clk.Advance(10 * time.Minute)
	require.Equal(t, time.Date(2026, 12, 2, 10, 18, 0, 0, time.UTC), h2.next(t))
	require.Equal(t, time.Date(2026, 12, 2, 10, 27, 0, 0, time.UTC), h2.next(t), "the latest missed tick, once")
	h2.none(t)
	require.Equal(t, "periodic ticks passed over schedule=c from=2026-12-02 10:19:00 +0000 UTC through=2026-12-02 10:26:00 +0000 UTC", h2.passedOver(t),
		"the ticks between the one waited for and the one caught up")
	require.Empty(t, h.passed, "a process on time passes nothing over")
	require.Empty(t, h2.passed)

	old := Periodic{Name: "o", Cron: "0 3 * * *", Missed: MissedCatchUpOne, Run: runs.Enqueue{Queue: "q"}}
	h3, _ := newPeriodicHarness(t, start, old, time.Hour)
	h3.none(t) // 03:00 is seven hours back, past the shortest retention (1h): its run may have been cleaned
}
