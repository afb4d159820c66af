package worldfault

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/leasehold/leasehold/host"
)

// witness is the downstream system the payouts' effects reach, outside
// the ledger (SPEC §5): it records every invocation by command key and
// refuses a fence token (epoch) lower than one it saw for the effect. It
// answers the hosts' reconciliation (host.WebhookEffector) from what it
// recorded.
type witness struct {
	url    string
	mu     sync.Mutex
	calls  map[string]int   // by command key
	calls2 map[string]bool  // idempotency keys invoked
	epoch  map[string]int64 // highest fence token by idempotency key, from calls and reconciles
	hook   func(c host.EffectCall)
}

// onCall makes f see every invocation the witness accepts, before it
// answers.
func (w *witness) onCall(f func(c host.EffectCall)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.hook = f
}

func startWitness(t *testing.T) *witness {
	w := &witness{calls: map[string]int{}, calls2: map[string]bool{}, epoch: map[string]int64{}}
	srv := httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(srv.Close)
	w.url = srv.URL
	return w
}

func (w *witness) serve(rw http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		// A reconcile fences too: a call below the asker's epoch is refused after it.
		key := r.URL.Query().Get("idempotency_key")
		var e int64
		_, _ = fmt.Sscan(r.URL.Query().Get("epoch"), &e)
		w.mu.Lock()
		_, seen := w.calls2[key]
		w.epoch[key] = max(w.epoch[key], e)
		w.mu.Unlock()
		_ = json.NewEncoder(rw).Encode(map[string]any{"happened": seen, "result": map[string]bool{"paid": seen}})
		return
	}
	var c host.EffectCall
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	if e, ok := w.epoch[c.IdempotencyKey]; ok && c.Epoch < e {
		w.mu.Unlock()
		http.Error(rw, "fence token below one already seen", http.StatusConflict)
		return
	}
	w.epoch[c.IdempotencyKey] = c.Epoch
	w.calls2[c.IdempotencyKey] = true
	w.calls[c.Command]++
	hook := w.hook
	w.mu.Unlock()
	if hook != nil {
		hook(c)
	}
	_, _ = rw.Write([]byte(`{"paid":true}`))
}

func (w *witness) snapshot() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.calls))
	for k, n := range w.calls {
		out[k] = n
	}
	return out
}
