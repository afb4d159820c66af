// Package witness is the downstream system of the tests: a witness outside
// the ledger. It records every invocation of an effect function with the
// fence token it carried, and — like a downstream store that remembers the
// highest token seen per idempotency key — rejects a token lower than one it
// has already accepted. Tests read its record to prove each effect happened
// once, or twice only after an uncertain report.
//
// NewIdempotent makes the witness a downstream that also deduplicates by
// the idempotency key, as SPEC §3 expects a real one to (a payment API's
// Idempotency-Key): the first accepted call for a key is applied and its
// result kept; every later accepted call for the key is answered with that
// result and applied no more. That is what absorbs an effect whose intent
// was lost with a lossy failover's window and so ran again under the next
// holder: the tests then count applications, not calls.
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
	Accepted bool // not refused for its fence
	// Deduped: accepted by an idempotent witness for a key already
	// applied, so answered with the first result and not applied. Always
	// false on a fence-only witness (New).
	Deduped bool
}

// Applied reports whether the call took effect downstream.
func (in Invocation) Applied() bool { return in.Accepted && !in.Deduped }

// Reply is an accepted call's answer.
type Reply struct {
	// Result is the first applied call's result for the key (this call's,
	// unless Deduped).
	Result  []byte
	Deduped bool
}

// Witness is safe for concurrent use.
type Witness struct {
	mu          sync.Mutex
	highest     map[string]int64
	invocations []Invocation
	floor       map[string]int64 // lowest token accepted, raised by Reconcile

	idempotent bool
	results    map[string][]byte // idempotent: the first applied result per key
}

// New returns an empty witness that checks fences only: every accepted call
// is applied.
func New() *Witness { return &Witness{highest: map[string]int64{}} }

// NewIdempotent returns an empty witness that checks fences and then
// deduplicates by idempotency key (see the package doc).
func NewIdempotent() *Witness {
	return &Witness{highest: map[string]int64{}, idempotent: true, results: map[string][]byte{}}
}

// Invoke records a call under key with fence; a fence lower than the
// highest accepted for key is refused (and recorded as refused).
func (w *Witness) Invoke(key string, fence int64) error {
	_, err := w.Apply(key, fence, nil)
	return err
}

// Apply is Invoke carrying the result the call would produce. The fence is
// checked first: a lower token than the highest accepted for key (or than
// a Reconcile's) is refused with ErrStaleToken, whatever the key's
// history — the zombie's late call. An accepted call raises the key's
// highest token; on an idempotent witness it is applied only if it is the
// key's first, and is otherwise answered with the first result.
func (w *Witness) Apply(key string, fence int64, result []byte) (Reply, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	least := max(w.highest[key], w.floor[key])
	in := Invocation{Key: key, Fence: fence, Accepted: fence >= least}
	if !in.Accepted {
		w.invocations = append(w.invocations, in)
		return Reply{}, fmt.Errorf("%w: key %q fence %d < %d", ErrStaleToken, key, fence, least)
	}
	w.highest[key] = fence
	reply := Reply{Result: result}
	if w.idempotent {
		if first, ok := w.results[key]; ok {
			in.Deduped, reply = true, Reply{Result: first, Deduped: true}
		} else {
			w.results[key] = append([]byte(nil), result...)
		}
	}
	w.invocations = append(w.invocations, in)
	return reply, nil
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

// Applied returns the number of applied calls per key: Accepted less the
// deduplicated ones.
func (w *Witness) Applied() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for _, in := range w.invocations {
		if in.Applied() {
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
