package sim

import (
	"context"
	"errors"
	"time"
)

// errTimeout: the caller gave up waiting; the call may or may not have
// been applied at the store (a lost reply looks the same as a lost
// request).
var errTimeout = errors.New("sim: call timed out: outcome unknown")

// errStoreFault: the store answered with an error and applied nothing.
var errStoreFault = errors.New("sim: store error (nothing applied)")

// call sends op to the store from thread t of process p and waits for the
// answer or timeout, whichever comes first. op runs at the store when the
// request arrives, on the loop, with the store clock at that instant. The
// request and the reply may each be delayed, lost (also by a partition of
// p at send or at reply time), or answered with a store error.
func (p *proc) call(t *thread, name string, timeout time.Duration, op func() error) error {
	return p.callCtx(t, name, nil, timeout, op)
}

// callCtx is call under the caller's context, as a driver call is: a
// simulated deadline in ctx (simRT.WithTimeout) is the call's timeout, and
// a ctx cancelled while the call is out returns ctx.Err() at once — the
// request may still land. nil ctx: timeout alone.
func (p *proc) callCtx(t *thread, name string, ctx context.Context, timeout time.Duration, op func() error) error {
	l := p.s.loop
	t.check() // a dead process sends nothing
	if ctx != nil {
		if dl, ok := ctx.Value(deadlineKey{}).(time.Duration); ok {
			timeout = max(dl-l.now, 0)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	k := p.s.knobs
	faulty := p.s.faulty()
	lostReq := p.partitioned() || (faulty && l.rng.Float64() < k.LossRate)
	storeErr := faulty && l.rng.Float64() < k.ErrRate
	lostReply := faulty && l.rng.Float64() < k.LossRate
	reqLat, respLat := k.latency(l.rng), k.latency(l.rng)
	if !faulty {
		reqLat, respLat = k.LatencyMin, k.LatencyMin
	}
	sent := l.now
	t.sentAt = sent
	var res error
	replied := false
	seq := t.prepare()
	if !lostReq {
		l.at(sent+reqLat, func() {
			var err error
			if storeErr {
				err = errStoreFault
			} else {
				err = op()
			}
			if lostReply || p.partitioned() {
				p.noteFault()
				return
			}
			l.at(l.now+respLat, func() {
				if p.partitioned() {
					return
				}
				if t.waitSeq == seq && t.parked {
					res, replied = err, true
					// Buggify: the process stops just as the answer
					// arrives (a GC pause, SIGSTOP, a descheduled VM),
					// before it can act on it.
					if faulty && k.PauseAfterCall > 0 && l.rng.Float64() < k.PauseAfterCall {
						p.pause("as the answer to " + name + " arrives")
					}
				}
				l.resume(t, seq)
			})
		})
	}
	l.at(sent+timeout, func() { l.resume(t, seq) })
	var w *watcher
	if ctx != nil && ctx.Done() != nil {
		w = l.watch(ctx, func() { l.at(l.now, func() { l.resume(t, seq) }) })
	}
	t.park()
	if w != nil {
		w.off = true
	}
	if rtt := l.now - sent; !replied || res == errStoreFault || rtt > p.s.healthyRTT {
		p.noteFault()
	}
	if !replied {
		if ctx != nil && ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return ctx.Err() // the caller gave up before its deadline
		}
		return errTimeout
	}
	return res
}
