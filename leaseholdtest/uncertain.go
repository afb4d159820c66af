package leaseholdtest

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
)

// EnqueueUncertain enqueues e and leaves it as an attempt that crashed in
// the middle of its effects would: claimed, the intent of each of keys
// recorded under that attempt's fence and never committed, the attempt
// failed (available again at once). The next attempt's Effect with one of
// keys is then *uncertain* — it returns an *leasehold.UncertainEffectError
// (ErrUncertain) without calling fn — and its handler must reconcile and
// call ResolveEffect: the code this helper lets you test. e needs at least
// two attempts, and its queue no other due run (the claim must take it).
func EnqueueUncertain(ctx context.Context, t T, c *leasehold.Client, e leasehold.Enqueue, keys ...string) *leasehold.Run {
	t.Helper()
	run, err := enqueueUncertain(ctx, c.Driver(), e, keys)
	if err != nil {
		t.Errorf("leaseholdtest: making run effects uncertain: %v", err)
		t.FailNow()
	}
	return run
}

func enqueueUncertain(ctx context.Context, d driver.Driver, e leasehold.Enqueue, keys []string) (*leasehold.Run, error) {
	if e.MaxAttempts == 1 {
		return nil, fmt.Errorf("run of one attempt: the uncertain effect needs a second attempt to be seen")
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no effect keys")
	}
	out, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []leasehold.Enqueue{e}})
	if err != nil {
		return nil, err
	}
	id := out[0].Run.ID
	got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: e.Queue, Owner: "leaseholdtest-crashed", Limit: 1, Lease: time.Minute})
	if err != nil {
		return nil, err
	}
	if len(got) != 1 || got[0].ID != id {
		return nil, fmt.Errorf("the claim did not take run %d (is another run of queue %q due?)", id, e.Queue)
	}
	r := got[0]
	for _, k := range keys {
		if _, err := d.RunEffectBegin(ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: k}); err != nil {
			return nil, fmt.Errorf("effect %q: %w", k, err)
		}
	}
	return d.RunFail(ctx, &driver.RunFailParams{ID: r.ID, Fence: r.Fence,
		Reason: "leaseholdtest: the attempt stopped after recording its effects' intents"})
}
