// Package batcher is leasehold's one group committer: callers hand items
// over one at a time and a single loop writes them to the store many at
// once. The run event committer and the run completer use it.
//
// # Gather policy
//
// The loop waits for a first item, then gathers more until FlushAt items
// are pending or MaxWait has passed since the first arrived, whichever
// comes first, and flushes at most MaxBatch in one call. MaxWait zero
// means no timer: the batch is whatever is already queued (after one
// yield), so a lone item pays one round trip at once and items arriving
// while a flush is in flight share the next one.
//
// # Per-item outcomes and retry
//
// The flush function reports one error per item, so a row the store
// refuses (a fenced completion, a fenced event) fails alone and its
// neighbours commit. An item whose error is Retryable is flushed again,
// ahead of newer items and after an exponential backoff measured on the
// injected clock, until it succeeds, fails for good, runs out of
// MaxAttempts, or the batcher stops. Done receives every item's final
// outcome exactly once, on the loop's goroutine.
//
// # Backpressure and stop
//
// Items wait in a bounded buffer; Add blocks (respecting its context)
// while it is full. Stop(ctx) flushes what is pending once more, retrying
// within ctx's deadline, and then fails every item still pending with an
// error wrapping [ErrStopped] (and the last store error), so a store outage
// can delay Stop only until its deadline and no caller waits forever. An
// Add after Stop returns ErrStopped without queueing.
package batcher
