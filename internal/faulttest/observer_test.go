package faulttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/witness"
)

// The observer is the parent's HTTP server: the witness (its own handler,
// for POST /invoke, GET /has and POST /reconcile) plus the reports of the worker processes.
//
//	POST /uncertain  uncertainReport   an effect found uncertain, before it is reconciled
//	POST /ack        ackReport         an event acknowledged by Step
//	POST /signal     signalReport      a point a scenario waits on
//	POST /stats      statsReport       a worker's keeper figures, at its exit
//	GET  /await?name=N                 blocks until the parent calls release(N)
//
// Invocations and uncertain reports go into one log under one lock, in the
// order the witness saw them, so "the n-th invocation of a key came after
// n-1 reports for it" is a question about positions in that log.

// uncertainReport is an effect a worker found uncertain.
type uncertainReport struct {
	Owner       string `json:"owner"`
	Key         string `json:"key"`   // the idempotency key, "<run id>:<effect key>"
	Fence       int64  `json:"fence"` // the reporting holder's
	IntentFence int64  `json:"intent_fence"`
}

// ackReport is an event a worker's Step acknowledged as durable.
type ackReport struct {
	Owner   string          `json:"owner"`
	Run     int64           `json:"run"`
	Fence   int64           `json:"fence"`
	Seq     int64           `json:"seq"`
	Kind    string          `json:"kind"`
	Payload json.RawMessage `json:"payload"`
}

// signalReport is a point in a worker's life a scenario may wait on.
type signalReport struct {
	Name   string            `json:"name"`
	Owner  string            `json:"owner"`
	Run    int64             `json:"run,omitempty"`
	Key    string            `json:"key,omitempty"`
	Fence  int64             `json:"fence,omitempty"`
	Detail map[string]string `json:"detail,omitempty"`
	At     time.Time         `json:"-"` // when the parent received it
}

// Signals.
const (
	sigStarted    = "started"     // the worker process runs its worker
	sigMidEffect  = "mid-effect"  // inside an effect, after the witness accepted it; blocks until killed
	sigPausePoint = "pause-point" // inside an effect, before calling the witness; waits for release
	sigLate       = "late"        // the late call and writes made after the release, with their outcomes
	sigCutPoint   = "cut-point"   // inside an effect, after the witness accepted it; waits for release (the parent cuts the link first)
)

// statsReport is a worker's figures at a graceful exit.
type statsReport struct {
	Owner  string       `json:"owner"`
	Keeper keeper.Stats `json:"keeper"`
}

// observation is one line of the witness's log.
type observation struct {
	At          time.Time // when the observer handled it
	Key         string
	Fence       int64
	Uncertain   bool // an uncertain report; otherwise an invocation
	Accepted    bool // an invocation the witness accepted
	IntentFence int64
	Owner       string // uncertain reports only (the witness's invoke carries no owner)
}

type eventID struct{ run, fence, seq int64 }

type observer struct {
	wit   *witness.Witness
	inner http.Handler

	// mu guards everything below. POST /invoke is served under it (the
	// witness's own handler does no I/O but the in-memory reply), so the
	// log has the witness's order.
	mu       sync.Mutex
	log      []observation
	acks     map[eventID]ackReport
	signals  []signalReport
	stats    map[string]keeper.Stats
	releases map[string]chan struct{}
	closed   chan struct{}
}

// newObserver serves a fresh witness and the report endpoints on
// 127.0.0.1 for the test and its worker processes.
func newObserver(t *testing.T) (*observer, *httptest.Server) {
	t.Helper()
	w := witness.New()
	o := &observer{wit: w, inner: w.Handler(), acks: map[eventID]ackReport{}, stats: map[string]keeper.Stats{},
		releases: map[string]chan struct{}{}, closed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /invoke", o.invoke)
	mux.Handle("GET /has", o.inner)
	mux.HandleFunc("POST /reconcile", func(rw http.ResponseWriter, req *http.Request) {
		o.mu.Lock() // it raises the witness's token floor: keep the log's order
		defer o.mu.Unlock()
		o.inner.ServeHTTP(rw, req)
	})
	mux.HandleFunc("POST /uncertain", report(o, func(r uncertainReport) {
		o.log = append(o.log, observation{At: time.Now(), Key: r.Key, Fence: r.Fence, Uncertain: true,
			IntentFence: r.IntentFence, Owner: r.Owner})
	}))
	mux.HandleFunc("POST /ack", report(o, func(r ackReport) { o.acks[eventID{r.Run, r.Fence, r.Seq}] = r }))
	mux.HandleFunc("POST /signal", report(o, func(r signalReport) {
		r.At = time.Now()
		o.signals = append(o.signals, r)
	}))
	mux.HandleFunc("POST /stats", report(o, func(r statsReport) { o.stats[r.Owner] = r.Keeper }))
	mux.HandleFunc("GET /await", o.await)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		close(o.closed) // ends every /await, so Close does not wait on one
		srv.Close()
	})
	return o, srv
}

// report decodes a JSON body into T and records it under o.mu.
func report[T any](o *observer, record func(T)) http.HandlerFunc {
	return func(rw http.ResponseWriter, req *http.Request) {
		var v T
		if err := json.NewDecoder(io.LimitReader(req.Body, 1<<20)).Decode(&v); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		o.mu.Lock()
		record(v)
		o.mu.Unlock()
		rw.WriteHeader(http.StatusNoContent)
	}
}

// invoke serves the witness's POST /invoke and logs the call with the
// witness's verdict.
func (o *observer) invoke(rw http.ResponseWriter, req *http.Request) {
	o.mu.Lock()
	defer o.mu.Unlock()
	at := time.Now()
	rec := &statusWriter{ResponseWriter: rw}
	o.inner.ServeHTTP(rec, req)
	fence, err := strconv.ParseInt(req.URL.Query().Get("fence"), 10, 64)
	if err != nil || (rec.status != http.StatusOK && rec.status != http.StatusConflict) {
		return // a bad request: the witness recorded nothing either
	}
	o.log = append(o.log, observation{At: at, Key: req.URL.Query().Get("key"), Fence: fence,
		Accepted: rec.status == http.StatusOK})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (o *observer) await(rw http.ResponseWriter, req *http.Request) {
	ch := o.gate(req.URL.Query().Get("name"))
	select {
	case <-ch:
		rw.WriteHeader(http.StatusNoContent)
	case <-o.closed:
		http.Error(rw, "observer closed", http.StatusServiceUnavailable)
	case <-req.Context().Done():
	}
}

func (o *observer) gate(name string) chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	ch, ok := o.releases[name]
	if !ok {
		ch = make(chan struct{})
		o.releases[name] = ch
	}
	return ch
}

// release lets every /await of name (past and future) return.
func (o *observer) release(name string) {
	ch := o.gate(name)
	o.mu.Lock()
	defer o.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// signal returns the first signal of name from owner ("" for any).
func (o *observer) signal(name, owner string) (signalReport, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.signals {
		if s.Name == name && (owner == "" || s.Owner == owner) {
			return s, true
		}
	}
	return signalReport{}, false
}

// ackCount is the number of events acknowledged so far (by owner, "" for
// all).
func (o *observer) ackCount(owner string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, a := range o.acks {
		if owner == "" || a.Owner == owner {
			n++
		}
	}
	return n
}

// snapshot copies what the observer holds.
func (o *observer) snapshot() (log []observation, acks []ackReport, stats map[string]keeper.Stats) {
	o.mu.Lock()
	defer o.mu.Unlock()
	log = append([]observation(nil), o.log...)
	for _, a := range o.acks {
		acks = append(acks, a)
	}
	stats = map[string]keeper.Stats{}
	for k, v := range o.stats {
		stats[k] = v
	}
	return log, acks, stats
}

// observerClient is a worker process's side of the observer (the witness
// itself it calls through witness.Client).
type observerClient struct {
	base string
	hc   *http.Client
}

// post sends v as JSON to path.
func (c *observerClient) post(ctx context.Context, path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("observer %s: %w", path, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("observer %s: status %d", path, resp.StatusCode)
	}
	return nil
}

// await blocks until the parent releases name.
func (c *observerClient) await(ctx context.Context, name string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/await?"+url.Values{"name": {name}}.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("observer await %s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("observer await %s: status %d", name, resp.StatusCode)
	}
	return nil
}
