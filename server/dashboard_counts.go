package server

import (
	"context"
	"sync"
	"time"

	"github.com/leasehold/leasehold"
)

// countsCache keeps the last run counts for Config.StatsCacheTTL on the
// server's clock.
//
// Which of bounded, indexed or cached: CACHED, with a stated staleness —
// an answer is at most StatsCacheTTL old (DefaultStatsTTL, 2 s, unless
// configured), and says when it was read (as_of), which the runs page
// prints. Not indexed: no index covers queue and state for the finished
// states, and adding one would cost every run transition an index write
// (state is in every partial index's predicate, so no transition is HOT)
// to speed up an operator's page. Not bounded: a capped count ("10,000+")
// still reads up to the cap per group, and the totals are what the page
// is for. So the counts are a grouped scan of the whole runs table
// (EXPLAIN: a sequential scan), and at 100k runs one read costs tens of
// milliseconds; a
// dashboard per person polling it, or a person paging, would run one scan
// per view. With the cache the scans are at most one per TTL however many
// pages ask, and concurrent askers share the one scan in flight
// (singleflight) instead of starting their own.
//
// It holds every queue's counts: each answer is filtered by the asking
// token's scopes afterwards (runStats), so what one token sees never
// depends on who filled the cache.
type countsCache struct {
	mu     sync.Mutex // guards everything below
	at     time.Time  // when val was read (the server's clock); zero: never
	val    []leasehold.RunCount
	flight chan struct{} // non-nil while one read is in flight; closed when it ends
}

// runCounts answers the cached counts while they are younger than the
// TTL, else reads them once for every caller waiting. asOf is when the
// answer was read. A failed read is not cached: the next caller tries
// again (so do the waiters of a read whose own caller left).
func (s *Server) runCounts(ctx context.Context) (counts []leasehold.RunCount, asOf time.Time, err error) {
	c := &s.counts
	for {
		c.mu.Lock()
		if !c.at.IsZero() && s.cfg.StatsCacheTTL > 0 && s.cfg.Clock.Now().Sub(c.at) < s.cfg.StatsCacheTTL {
			counts, asOf = c.val, c.at
			c.mu.Unlock()
			return counts, asOf, nil
		}
		if wait := c.flight; wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue // fresh now, or failed: look again
			case <-ctx.Done():
				return nil, time.Time{}, ctx.Err()
			}
		}
		done := make(chan struct{})
		c.flight = done
		c.mu.Unlock()

		now := s.cfg.Clock.Now() // before the read: the counts are at least this fresh
		counts, err = s.c.RunCounts(ctx)
		c.mu.Lock()
		if err == nil {
			c.val, c.at = counts, now
		}
		c.flight = nil
		close(done)
		c.mu.Unlock()
		return counts, now, err
	}
}
