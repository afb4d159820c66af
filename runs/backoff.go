package runs

import (
	"time"

	"github.com/leasehold/leasehold/lease"
)

// Backoff is the retry delay after a failed attempt: Base·2^(attempt-1),
// capped at Max, then spread by ±Jitter/2 with the caller's uniform sample
// u in [0, 1) so a wave of failures does not retry in lockstep. All
// arithmetic saturates. Defaults: Base 1s, Max 1h, Jitter 0.5.
type Backoff struct {
	Base   time.Duration
	Max    time.Duration
	Jitter float64 // fraction of the delay, in (0, 1]; zero, NaN or outside take 0.5
}

// Delay returns the delay before the next attempt after attempt (1-based).
func (b Backoff) Delay(attempt int, u float64) time.Duration {
	if b.Base <= 0 {
		b.Base = time.Second
	}
	if b.Max <= 0 {
		b.Max = time.Hour
	}
	// Zero takes the default like every other zero field: retries in
	// lockstep are what jitter is for. The comparison is written so that
	// NaN fails it too.
	if !(b.Jitter > 0 && b.Jitter <= 1) {
		b.Jitter = 0.5
	}
	d := b.Base
	for i := 1; i < attempt && d < b.Max; i++ {
		d = lease.MulSat(d, 2)
	}
	d = min(d, b.Max)
	if !(u >= 0) { // also NaN
		u = 0
	}
	u = min(u, 1)
	spread := time.Duration(float64(d) * b.Jitter * (u - 0.5))
	return max(lease.AddSat(d, spread), 0)
}
