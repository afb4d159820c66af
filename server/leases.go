package server

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/lease"
)

// leaseBook remembers, per lease (run, fence), the owner and the send time
// of the last confirmed write that set its expiry — the claim or a
// renewal made through this server. It is what the server vouches for:
// runway is measured from that send on this server's monotonic clock
// (SPEC §1), never from the store's expires_at, so the app↔store clock
// offset plays no part.
//
// It is a cache of the server's own knowledge, not of the store: a lease
// it does not know (claimed through another replica, or before a restart)
// has zero runway here, which is the safe direction — the gate then makes
// a synchronous renewal before it vouches for anything.
type leaseBook struct {
	clk    clock.Clock
	timing lease.Timing
	// widen, when set, is the store-clock watch's timing at a reading of
	// clk: S widened by the cut in force (clockwatch.go).
	widen func(t lease.Timing, now time.Time) lease.Timing

	mu      sync.Mutex // guards m and pruneAt; never held across a store call
	m       map[driver.RunLeaseRef]held
	pruneAt int
}

type held struct {
	owner string
	sent  time.Time
}

const minPrune = 1024

func newLeaseBook(clk clock.Clock, t lease.Timing) *leaseBook {
	return &leaseBook{clk: clk, timing: t, m: map[driver.RunLeaseRef]held{}, pruneAt: minPrune}
}

// confirm records that a write sent at sent, for owner, set the lease's
// expiry. An older send never replaces a newer one (two renewals of one
// lease may answer out of order).
func (b *leaseBook) confirm(ref driver.RunLeaseRef, owner string, sent time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h, ok := b.m[ref]; ok && h.sent.After(sent) {
		return
	}
	b.m[ref] = held{owner: owner, sent: sent}
	if len(b.m) >= b.pruneAt {
		b.pruneLocked()
	}
}

// pruneLocked drops leases whose runway ran out: a runner that never
// finished them does not grow the book without bound.
func (b *leaseBook) pruneLocked() {
	now := b.clk.Now()
	for ref, h := range b.m {
		if lease.Runway(h.sent, now, b.timing) == 0 {
			delete(b.m, ref)
		}
	}
	b.pruneAt = max(2*len(b.m), minPrune)
}

// forget drops a lease that ended (completed, failed, blocked, cancelled,
// fenced out).
func (b *leaseBook) forget(ref driver.RunLeaseRef) {
	b.mu.Lock()
	delete(b.m, ref)
	b.mu.Unlock()
}

// runway is the lease's runway now, 0 if the book does not know it.
func (b *leaseBook) runway(ref driver.RunLeaseRef) time.Duration {
	b.mu.Lock()
	h, ok := b.m[ref]
	b.mu.Unlock()
	if !ok {
		return 0
	}
	now := b.clk.Now()
	return lease.Runway(h.sent, now, b.timingAt(now))
}

// timingAt is the timing the book vouches by at now.
func (b *leaseBook) timingAt(now time.Time) lease.Timing {
	if b.widen == nil {
		return b.timing
	}
	return b.widen(b.timing, now)
}

// available is what the side-effect gate may count on (SPEC §2):
// min(runway, D_stop - lag), lag being the time since the send of the last
// confirmed write. For a synchronous renewal the two come from one send,
// so D_stop - lag is the tighter bound while D_stop + S < T_lease.
func (b *leaseBook) available(ref driver.RunLeaseRef) time.Duration {
	b.mu.Lock()
	h, ok := b.m[ref]
	b.mu.Unlock()
	if !ok {
		return 0
	}
	now := b.clk.Now()
	t := b.timingAt(now)
	lag := max(now.Sub(h.sent), 0)
	return max(min(lease.Runway(h.sent, now, t), lease.SubSat(t.Stop, lag)), 0)
}

// ms is a runway on the wire: whole milliseconds, rounded down, so the
// client's deadline is never later than the server's.
func ms(d time.Duration) int64 { return max(d.Milliseconds(), 0) }

// bookEntry is one lease the book knows, as the dashboard shows it.
type bookEntry struct {
	ref  driver.RunLeaseRef
	held held
}

// snapshot returns the leases the book knows with runway left, by run id
// then fence, at most limit of them, and how many there are in all.
func (b *leaseBook) snapshot(limit int) (out []bookEntry, total int) {
	now := b.clk.Now()
	b.mu.Lock()
	for ref, h := range b.m {
		if lease.Runway(h.sent, now, b.timing) > 0 {
			out = append(out, bookEntry{ref, h})
		}
	}
	b.mu.Unlock()
	slices.SortFunc(out, func(a, c bookEntry) int {
		return cmp.Or(cmp.Compare(a.ref.ID, c.ref.ID), cmp.Compare(a.ref.Fence, c.ref.Fence))
	})
	total = len(out)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, total
}
