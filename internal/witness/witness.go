// Package witness is the downstream system of the tests: a witness outside
// the ledger. It records every invocation of an effect function with the
// fence token it carried, and — like a downstream store that remembers the
// highest token seen per idempotency key — rejects a token lower than one it
// has already accepted. Tests read its record to prove each effect happened
// once, or twice only after an uncertain report.
package witness

import (
	"errors"
	"fmt"
	"sync"
)

// ErrStaleToken is a call refused for carrying a lower fence than one
// already accepted for its key.
var ErrStaleToken = errors.New("witness: fence token lower than one already accepted")

// Invocation is one call as the witness saw it.
type Invocation struct {
	Key      string // the idempotency key
	Fence    int64
	Accepted bool
}

// Witness is safe for concurrent use.
type Witness struct {
	mu          sync.Mutex
	highest     map[string]int64
	invocations []Invocation
	floor       map[string]int64 // lowest token accepted, raised by Reconcile
}

// New returns an empty witness.
func New() *Witness { return &Witness{highest: map[string]int64{}} }

// Invoke records a call under key with fence; a fence lower than the
// highest accepted for key is refused (and recorded as refused).
func (w *Witness) Invoke(key string, fence int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	least := max(w.highest[key], w.floor[key])
	ok := fence >= least
	w.invocations = append(w.invocations, Invocation{Key: key, Fence: fence, Accepted: ok})
	if !ok {
		return fmt.Errorf("%w: key %q fence %d < %d", ErrStaleToken, key, fence, least)
	}
	w.highest[key] = fence
	return nil
}

// Has reports whether a call under key was accepted: how a handler
// reconciles an uncertain effect.
func (w *Witness) Has(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.highest[key]
	return ok
}

// Reconcile is how a holder told of an uncertain effect asks the
// downstream system about it: it reports whether a call under key was
// accepted, and raises the lowest token the witness accepts for key to
// fence, the asker's. Without the raise a holder that paused before its
// call (lower token) could still be accepted after the asker found
// nothing and ran the effect itself — the double the Promela model found
// (model/README.md, limit-zombie-double).
func (w *Witness) Reconcile(key string, fence int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.highest[key]
	if w.floor == nil {
		w.floor = map[string]int64{}
	}
	w.floor[key] = max(w.floor[key], fence)
	return ok
}

// Accepted returns the number of accepted calls per key.
func (w *Witness) Accepted() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for _, in := range w.invocations {
		if in.Accepted {
			out[in.Key]++
		}
	}
	return out
}

// Invocations returns a copy of every call seen, in order.
func (w *Witness) Invocations() []Invocation {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Invocation(nil), w.invocations...)
}
