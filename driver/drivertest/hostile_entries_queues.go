package drivertest

import (
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// The queue registry's entry points (QueuePause, QueueSetLimits): each
// call names its own queue q<n> unless the name is the hostile value.

// queueNow is the registry row of q as QueueList reports it.
func (x *hx) queueNow(q string) (*driver.Queue, error) {
	qs, err := x.d.QueueList(x.ctx, &driver.QueueListParams{})
	if err != nil {
		return nil, err
	}
	for _, got := range qs {
		if got.Name == q {
			return got, nil
		}
	}
	return nil, fmt.Errorf("queue %q is not listed", clip([]byte(q)))
}

// limitsAre requires q's limits to be want's.
func (x *hx) limitsAre(q string, want driver.QueueSetLimitsParams) error {
	got, err := x.queueNow(q)
	if err != nil {
		return err
	}
	if got.MaxRunning != want.MaxRunning || got.RateLimit != want.RateLimit || got.RatePeriod != want.RatePeriod {
		return fmt.Errorf("limits %d running, %d per %s; want %d, %d per %s",
			got.MaxRunning, got.RateLimit, got.RatePeriod, want.MaxRunning, want.RateLimit, want.RatePeriod)
	}
	return nil
}

func queueEntries() []hostileEntry {
	setLimits := func(x *hx, p driver.QueueSetLimitsParams) hostileCall {
		return hostileCall{func() error { return ignore(x.d.QueueSetLimits(x.ctx, &p)) },
			func() error { return x.limitsAre(p.Queue, p) }}
	}
	return []hostileEntry{
		str("QueueSetLimits.queue", func(x *hx, v string) hostileCall {
			return setLimits(x, driver.QueueSetLimitsParams{Queue: v, MaxRunning: 1})
		}),
		str("QueuePause.queue", func(x *hx, v string) hostileCall {
			return hostileCall{func() error {
				return ignore(x.d.QueuePause(x.ctx, &driver.QueuePauseParams{Queue: v, Paused: true, Declare: true}))
			}, func() error {
				got, err := x.queueNow(v)
				if err == nil && !got.Paused {
					err = fmt.Errorf("queue %q is not paused", clip([]byte(v)))
				}
				return err
			}}
		}),
		num("QueueSetLimits.max_running", func(x *hx, v int64) hostileCall {
			return setLimits(x, driver.QueueSetLimitsParams{Queue: x.queue(), MaxRunning: int(v)})
		}),
		num("QueueSetLimits.rate_limit", func(x *hx, v int64) hostileCall {
			return setLimits(x, driver.QueueSetLimitsParams{Queue: x.queue(), RateLimit: int(v), RatePeriod: time.Second})
		}),
		dur("QueueSetLimits.rate_period", func(x *hx, v time.Duration) hostileCall {
			return setLimits(x, driver.QueueSetLimitsParams{Queue: x.queue(), RateLimit: 1, RatePeriod: v})
		}),
	}
}
