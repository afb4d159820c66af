package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/batcher"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/lease"
)

// completer group-commits successful completions: the handlers of a worker
// hand their (run, fence, result) over and wait; one RunCompleteMany
// statement completes every run of the batch that is still held under its
// fence, in one transaction, and reports the others as fenced — a fenced
// run fails alone, its neighbours complete. It is an internal/batcher with
// no gather timer, so a lone completion pays one round trip at once and
// completions arriving while a batch is in flight share the next.
//
// One bad row never takes its neighbours with it. Each completion is
// checked by the store's own rule (driver.ValidateRunCompleteMany) before
// it joins a batch, so one the store would refuse is answered at once with
// its typed error and never enters one; and should the store still refuse
// a batch as invalid, each of its completions is written alone, so the
// refusal reaches only the row it is about. Neither is retried: an invalid
// completion stays invalid.
//
// A batch that failed otherwise is retried with backoff on the worker's
// clock, at most completerAttempts times, each bounded by attemptTimeout
// (nobody waits for the answer longer); a completion that still fails
// leaves its run running, and the reclaimer returns it once its lease
// expires.
type completer struct {
	store Store
	rt    rt.Runtime
	clock clock.Clock
	b     *batcher.Batcher[completion]
	dl    sharedDeadline
}

// sharedDeadline is the end of the waits for completions queued close
// together: a context cancelled by one timer on the runtime's clock, which
// every wait that starts within limit/deadlineShares of the first shares.
// Each wait used to make a timer of its own (two allocations and a
// timer-heap insert and delete a completion); now a worker completing
// thousands of runs a second makes deadlineShares of them per limit
// (TestCompletionsShareTheirDeadline).
type sharedDeadline struct {
	mu    sync.Mutex
	ctx   context.Context // cancelled at until
	until time.Time       // on the completer's clock
}

// deadlineShares: a wait may end up to limit/deadlineShares before its
// full limit (never after it).
const deadlineShares = 64

// completerAttempts bounds the flushes of one completion.
const completerAttempts = 5

type completion struct {
	c   driver.RunCompletion
	out *outcome // answered once, by answer
}

// outcome is one completion's answer: err (nil: completed; ErrFenced-
// wrapping: refused) is set before done fires.
type outcome struct {
	err  error
	done rt.Event
}

func newCompleter(store Store, c clock.Clock, r rt.Runtime, attemptTimeout time.Duration, log *slog.Logger) *completer {
	cp := &completer{store: store, rt: r, clock: c}
	b, err := batcher.New(batcher.Config[completion]{Name: "completer",
		MaxBatch: 1000, Buffer: 4096, MaxAttempts: completerAttempts, AttemptTimeout: attemptTimeout,
		BackoffMin: time.Millisecond, BackoffMax: time.Second,
		Flush: cp.flush, Retryable: retryable,
		Done: answer, Clock: c, Runtime: r, Logger: log})
	if err != nil {
		panic(err) // unreachable: Flush is set and the sizes are valid
	}
	cp.b = b
	return cp
}

// retryable: a fenced or invalid completion is final.
func retryable(err error) bool {
	return !errors.Is(err, driver.ErrFenced) && !errors.Is(err, lease.ErrInvalid)
}

// complete checks a completion, queues it and waits for its batch, for
// at most limit (then context.DeadlineExceeded; the batch may still
// complete it). After the completer stopped it writes the completion
// alone. A completion the store's rule refuses is answered with that
// *journal.InputError (errors.Is lease.ErrInvalid) before anything is
// written.
//
// It takes a duration, not a context: the common path — room in the
// buffer, then a wait for the batch — needs only the wait's deadline,
// shared with the completions queued beside it (sharedDeadline: it ends
// the wait after at most limit, and at least limit - limit/deadlineShares),
// and a context with a deadline (a timer of its own, its done channel, its
// cancel) is made only when the buffer is full or the completer stopped.
//
// out is the completion's answer, zero and used for nothing else: a
// worker's is part of its run's handle (Run.out), one allocation fewer a
// completion than an outcome of its own.
func (c *completer) complete(limit time.Duration, rc driver.RunCompletion, out *outcome) error {
	result, err := driver.ValidateRunCompletion(&rc)
	if err != nil {
		return fmt.Errorf("complete of run %d under fence %d: %w", rc.ID, rc.Fence, err)
	}
	rc.Result = result
	out.done = c.rt.NewEvent()
	it := completion{c: rc, out: out}
	ok, err := c.b.TryAdd(it)
	if !ok {
		ctx, cancel := c.rt.WithTimeout(context.Background(), limit)
		defer cancel()
		if err == nil { // the buffer is full: wait for room
			err = c.b.Add(ctx, it)
		}
		if errors.Is(err, batcher.ErrStopped) {
			_, err = c.store.RunComplete(ctx, &driver.RunCompleteParams{ID: rc.ID, Fence: rc.Fence, Result: rc.Result})
			return err
		}
		if err != nil {
			return err
		}
		if c.rt.Wait(ctx, it.out.done, -1) != rt.Fired {
			return ctx.Err()
		}
		return it.out.err
	}
	if c.rt.Wait(c.deadline(limit), it.out.done, -1) != rt.Fired {
		return context.DeadlineExceeded
	}
	return it.out.err
}

// deadline returns the shared context a wait of at most limit from now
// ends with: the current one if it ends within the last
// limit/deadlineShares of that limit, else a new one.
func (c *completer) deadline(limit time.Duration) context.Context {
	end := c.clock.Now().Add(limit)
	c.dl.mu.Lock()
	defer c.dl.mu.Unlock()
	// Not one already ended: a clock stepped back would otherwise hand a
	// new wait a context cancelled before it began (review).
	if c.dl.ctx != nil && c.dl.ctx.Err() == nil && !c.dl.until.After(end) && c.dl.until.After(end.Add(-limit/deadlineShares)) {
		return c.dl.ctx
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.rt.After(limit, cancel)
	c.dl.ctx, c.dl.until = ctx, end
	return ctx
}

func (c *completer) flush(ctx context.Context, batch []completion) []error {
	p := &driver.RunCompleteManyParams{Runs: make([]driver.RunCompletion, len(batch))}
	for i, it := range batch {
		p.Runs[i] = it.c
	}
	res, err := c.store.RunCompleteMany(ctx, p)
	if errors.Is(err, lease.ErrInvalid) && len(batch) > 1 {
		return c.flushAlone(ctx, batch)
	}
	if err != nil {
		return sameError(len(batch), err)
	}
	if len(res.Fenced) == 0 {
		return nil
	}
	errs := make([]error, len(batch))
	for _, i := range res.Fenced {
		it := batch[i]
		errs[i] = fmt.Errorf("complete of run %d under fence %d: %w", it.c.ID, it.c.Fence, driver.ErrFenced)
	}
	return errs
}

// flushAlone writes each completion of a batch the store refused as
// invalid on its own, so the refusal is answered to the completion it is
// about (its batch's problem names only the first) and the others
// complete. It costs one round trip per completion, only on this path,
// which complete's check keeps for what that check cannot see (one run
// twice in a batch, a store stricter than the rule).
func (c *completer) flushAlone(ctx context.Context, batch []completion) []error {
	errs := make([]error, len(batch))
	failed := false
	for i, it := range batch {
		_, err := c.store.RunComplete(ctx, &driver.RunCompleteParams{ID: it.c.ID, Fence: it.c.Fence, Result: it.c.Result})
		if err != nil {
			errs[i], failed = fmt.Errorf("complete of run %d under fence %d: %w", it.c.ID, it.c.Fence, err), true
		}
	}
	if !failed {
		return nil
	}
	return errs
}

// answer hands every completion its outcome.
func answer(batch []completion, errs []error) {
	for i, it := range batch {
		if errs != nil {
			it.out.err = errs[i]
		}
		it.out.done.Fire()
	}
}
