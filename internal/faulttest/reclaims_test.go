package faulttest

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// reclaimLog records every reclaim as the store's reclaim statement
// returned it: fence, reason and scheduled_at written at the reclaim.
type reclaimLog struct {
	driver.RunStore
	mu     sync.Mutex
	all    []reclaim
	passes []reclaimPass
}

// reclaimPass is one reclaim statement as the reclaimer made it: when it
// was sent and answered (wall clock), and what came of it.
type reclaimPass struct {
	Sent, Answered time.Time
	Reclaimed      int
	Err            error
}

// reclaim is one run taken back from a holder whose lease expired.
type reclaim struct {
	Run    *driver.Run // after the reclaim
	Owner  string      // the holder, from the reason
	Fence  int64       // the holder's fence
	Expiry time.Time   // the holder's last expires_at (store clock)
	// Strand runs from the holder's last renewal (Expiry - T_lease, as the
	// store wrote it) to the reclaim (scheduled_at, the store's now).
	Strand time.Duration
	// Sent and Answered are when the reclaimer sent the statement that
	// reclaimed it and got the answer (wall clock).
	Sent, Answered time.Time
	Err            error // the reason did not parse
}

// reclaimReason is the reason the drivers write at a reclaim.
var reclaimReason = regexp.MustCompile(`^lease expired at (\S+) \(owner (\S+), fence (\d+)\)$`)

func (l *reclaimLog) RunReclaim(ctx context.Context, p *driver.RunReclaimParams) (*driver.RunReclaimResult, error) {
	l.mu.Lock()
	i := len(l.passes)
	l.passes = append(l.passes, reclaimPass{Sent: time.Now()})
	l.mu.Unlock()
	res, err := l.RunStore.RunReclaim(ctx, p)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.passes[i].Answered, l.passes[i].Err = time.Now(), err
	if err != nil {
		return res, err
	}
	l.passes[i].Reclaimed = len(res.Reclaimed)
	for _, r := range res.Reclaimed {
		rc := reclaim{Run: r, Sent: l.passes[i].Sent, Answered: l.passes[i].Answered}
		m := reclaimReason.FindStringSubmatch(r.Reason)
		if m == nil {
			rc.Err = fmt.Errorf("run %d: reclaim reason %q", r.ID, r.Reason)
		} else {
			rc.Owner = m[2]
			rc.Fence, _ = strconv.ParseInt(m[3], 10, 64)
			rc.Expiry, rc.Err = time.Parse(time.RFC3339Nano, m[1])
			rc.Strand = r.ReclaimedAt.Sub(rc.Expiry.Add(-timing.Lease))
		}
		l.all = append(l.all, rc)
	}
	return res, nil
}

// of returns the reclaims of owner's leases ("" for all).
func (l *reclaimLog) of(owner string) []reclaim {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []reclaim
	for _, r := range l.all {
		if owner == "" || r.Owner == owner {
			out = append(out, r)
		}
	}
	return out
}

// passesAround describes the reclaim passes in flight from a P before
// from until a P after to: what a strand past its bound is explained by.
func (l *reclaimLog) passesAround(from, to time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, p := range l.passes {
		if p.Sent.After(to.Add(timing.Poll)) || (!p.Answered.IsZero() && p.Answered.Before(from.Add(-timing.Poll))) {
			continue
		}
		took := "not answered"
		if !p.Answered.IsZero() {
			took = "answered " + p.Answered.Sub(p.Sent).Round(time.Millisecond).String() + " later"
		}
		fmt.Fprintf(&b, "\n  pass sent %s, %s: %d reclaimed, err %v", p.Sent.Format("15:04:05.000"), took, p.Reclaimed, p.Err)
	}
	return b.String()
}
