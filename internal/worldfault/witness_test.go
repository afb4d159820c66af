package worldfault

import (
	"encoding/json"
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
	url   string
	mu    sync.Mutex
	calls map[string]int   // by command key
	epoch map[string]int64 // highest fence token by idempotency key
	hook  func(c host.EffectCall)
}

// onCall makes f see every invocation the witness accepts, before it
// answers.
func (w *witness) onCall(f func(c host.EffectCall)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.hook = f
}

func startWitness(t *testing.T) *witness {
	w := &witness{calls: map[string]int{}, epoch: map[string]int64{}}
	srv := httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(srv.Close)
	w.url = srv.URL
	return w
}

func (w *witness) serve(rw http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		w.mu.Lock()
		_, seen := w.epoch[r.URL.Query().Get("idempotency_key")]
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
