package server

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/leasehold/leasehold/clock"
)

// rateLimits is the per-token request rate (Config.RateLimit): a token
// bucket per token id, read on the server's clock so a test can step it.
type rateLimits struct {
	clk   clock.Clock
	limit rate.Limit // 0: no limit
	burst int

	mu sync.Mutex
	m  map[string]*rate.Limiter
}

// RateLimitedError is a request over its token's rate. Nothing was done;
// retry after RetryAfter.
type RateLimitedError struct {
	TokenID    string
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("token %s is over its rate limit; retry after %v", e.TokenID, e.RetryAfter)
}

func newRateLimits(clk clock.Clock, perSecond float64, burst int) *rateLimits {
	return &rateLimits{clk: clk, limit: rate.Limit(perSecond), burst: burst, m: map[string]*rate.Limiter{}}
}

// take spends one request of the token's bucket, or says how long to
// wait. The bucket is not charged for a refused request.
func (l *rateLimits) take(id string) error {
	if l.limit <= 0 {
		return nil
	}
	l.mu.Lock()
	lim, ok := l.m[id]
	if !ok {
		lim = rate.NewLimiter(l.limit, l.burst)
		l.m[id] = lim
	}
	l.mu.Unlock()
	now := l.clk.Now()
	res := lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return &RateLimitedError{TokenID: id, RetryAfter: d}
	}
	return nil
}
