package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/server"
)

// stores are the two stores every API test runs on.
var stores = []struct {
	name string
	open func(t *testing.T) leasehold.Driver
}{
	{"sqlite", func(t *testing.T) leasehold.Driver {
		d, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db")})
		require.NoError(t, err)
		return d
	}},
	{"postgres", func(t *testing.T) leasehold.Driver {
		url, schema := testdb.Schema(t)
		d, err := postgres.Open(context.Background(), postgres.Config{URL: url, Schema: schema, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		return d
	}},
}

// eachStore runs fn as a subtest on each store.
func eachStore(t *testing.T, fn func(t *testing.T, open func(t *testing.T) leasehold.Driver)) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			fn(t, s.open)
		})
	}
}

// testBundle is one server over a fresh store, behind a real loopback
// listener (httptest.Server).
type testBundle struct {
	c    *leasehold.Client
	s    *server.Server
	url  string
	http *http.Client // the test server's own: its connections close with it; sends token
	// token is the bearer secret http sends: an admin token setup mints,
	// so a test that is not about auth need not think of it (as and anon
	// give the same bundle with another token or none).
	token string
	base  http.RoundTripper // the transport under the bearer wrapper
}

// bearer sends a bearer token with every request (none when token is
// empty).
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token == "" {
		return b.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// withToken makes b's http client send token (minting an admin token
// first when token is "admin").
func (b *testBundle) withToken(t *testing.T, base http.RoundTripper, token string) *testBundle {
	t.Helper()
	if token == "admin" {
		var err error
		token, _, err = b.c.CreateToken(context.Background(), "test admin", []string{"admin"})
		require.NoError(t, err)
	}
	b.token, b.base = token, base
	b.http = &http.Client{Transport: bearer{token: token, next: base}}
	return b
}

// as is b sending another token (b itself is unchanged).
func (b *testBundle) as(t *testing.T, token string) *testBundle {
	t.Helper()
	c := *b
	return c.withToken(t, b.base, token)
}

// anon is b sending no token.
func (b *testBundle) anon(t *testing.T) *testBundle { return b.as(t, "") }

// mint creates a token with scopes and returns its secret.
func (b *testBundle) mint(t *testing.T, scopes ...string) string {
	t.Helper()
	secret, _, err := b.c.CreateToken(context.Background(), "test", scopes)
	require.NoError(t, err)
	return secret
}

func setup(t *testing.T, open func(t *testing.T) leasehold.Driver, ccfg leasehold.Config, scfg server.Config) *testBundle {
	t.Helper()
	ctx := context.Background()
	if ccfg.Logger == nil {
		ccfg.Logger = slog.New(slog.DiscardHandler)
	}
	c, err := leasehold.NewClient(ctx, open(t), ccfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	if scfg.Logger == nil {
		scfg.Logger = ccfg.Logger
	}
	s, err := server.New(c, scfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(context.Background()) }) // the remote leases' keeper, before the store closes
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	b := &testBundle{c: c, s: s, url: hs.URL}
	return b.withToken(t, hs.Client().Transport, "admin")
}

// reply is one answer: its status, media type and body.
type reply struct {
	status int
	ctype  string
	body   []byte
}

// do sends a raw body (nil for none).
func (b *testBundle) do(t *testing.T, method, path string, body []byte) reply {
	t.Helper()
	r, err := b.send(method, path, body)
	require.NoError(t, err)
	return r
}

// send is do without the test's require: safe off the test goroutine.
func (b *testBundle) send(method, path string, body []byte) (reply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.url+path, rd)
	if err != nil {
		return reply{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: out}, err
}

// postAsync posts v off the test goroutine; the answer (or the error)
// arrives on the channel.
func (b *testBundle) postAsync(t *testing.T, path string, v any) <-chan replyOrErr {
	t.Helper()
	body, err := json.Marshal(v)
	require.NoError(t, err)
	ch := make(chan replyOrErr, 1)
	go func() {
		r, err := b.send(http.MethodPost, path, body)
		ch <- replyOrErr{r, err}
	}()
	return ch
}

type replyOrErr struct {
	reply
	err error
}

// post sends v as JSON.
func (b *testBundle) post(t *testing.T, path string, v any) reply {
	t.Helper()
	body, err := json.Marshal(v)
	require.NoError(t, err)
	return b.do(t, http.MethodPost, path, body)
}

func (b *testBundle) get(t *testing.T, path string) reply {
	t.Helper()
	return b.do(t, http.MethodGet, path, nil)
}

// ok decodes a 2xx answer into v.
func (r reply) ok(t *testing.T, v any) {
	t.Helper()
	require.Less(t, r.status, 300, "status %d: %s", r.status, r.body)
	require.Equal(t, "application/json", r.ctype)
	require.NoError(t, json.Unmarshal(r.body, v))
}

// problem is an answer's problem document.
type problem struct {
	Type         string `json:"type"`
	Title        string `json:"title"`
	Status       int    `json:"status"`
	Detail       string `json:"detail"`
	Field        string `json:"field"`
	RunID        int64  `json:"run_id"`
	Fence        int64  `json:"fence"`
	CurrentFence int64  `json:"current_fence"`
	State        string `json:"state"`
	Key          string `json:"key"`
	IntentFence  int64  `json:"intent_fence"`
	NeededMS     int64  `json:"needed_ms"`
	AvailableMS  int64  `json:"available_ms"`
	Queue        string `json:"queue"`
	Limit        int64  `json:"limit"`
	// auth and worlds
	Action        string `json:"action"`
	Resource      string `json:"resource"`
	World         string `json:"world"`
	Epoch         int64  `json:"epoch"`
	CurrentEpoch  int64  `json:"current_epoch"`
	CurrentHolder string `json:"current_holder"`
	Reason        string `json:"reason"`
}

// problem requires r to be a problem document of type typ (the last path
// segment of its URI) and returns it.
func (r reply) problem(t *testing.T, typ string) problem {
	t.Helper()
	require.Equal(t, "application/problem+json", r.ctype, "status %d: %s", r.status, r.body)
	var p problem
	require.NoError(t, json.Unmarshal(r.body, &p))
	require.Equal(t, "https://leasehold.dev/problems/"+typ, p.Type, "%s", r.body)
	require.Equal(t, r.status, p.Status)
	return p
}

// Wire shapes the tests read.
type run struct {
	ID          int64           `json:"id"`
	Queue       string          `json:"queue"`
	Payload     json.RawMessage `json:"payload"`
	State       string          `json:"state"`
	Attempt     int             `json:"attempt"`
	Fence       int64           `json:"fence"`
	Owner       string          `json:"owner"`
	UniqueKey   string          `json:"unique_key"`
	Reason      string          `json:"reason"`
	Result      json.RawMessage `json:"result"`
	ExpiresAt   string          `json:"expires_at"`
	RunwayMS    int64           `json:"runway_ms"`
	MaxAttempts int             `json:"max_attempts"`
}

type runsBody struct {
	Runs []run `json:"runs"`
}

type enqueued struct {
	Runs []struct {
		Run      run  `json:"run"`
		Existing bool `json:"existing"`
	} `json:"runs"`
}

type runBody struct {
	Run run `json:"run"`
}

// enqueue enqueues one run of queue and returns it.
func (b *testBundle) enqueue(t *testing.T, queue, payload string) run {
	t.Helper()
	var e enqueued
	b.post(t, "/v1/runs", map[string]any{"runs": []map[string]any{{"queue": queue, "payload": json.RawMessage(payload)}}}).ok(t, &e)
	require.Len(t, e.Runs, 1)
	return e.Runs[0].Run
}

// claimOne claims one run of queue for owner.
func (b *testBundle) claimOne(t *testing.T, queue, owner string) run {
	t.Helper()
	var c runsBody
	b.post(t, "/v1/runs/claim", map[string]any{"queue": queue, "owner": owner}).ok(t, &c)
	require.Len(t, c.Runs, 1)
	return c.Runs[0]
}

func runPath(id int64, tail string) string { return fmt.Sprintf("/v1/runs/%d%s", id, tail) }

// snapshot is everything the API shows of a run: its row, its effect
// ledger and its event log, as the server answers them.
func (b *testBundle) snapshot(t *testing.T, id int64) string {
	t.Helper()
	var parts []string
	for _, p := range []string{"", "/effects", "/events"} {
		r := b.get(t, runPath(id, p))
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		parts = append(parts, string(r.body))
	}
	return strings.Join(parts, "\n")
}

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// httpTransport is a transport the test closes the idle connections of.
type httpTransport struct{ tr *http.Transport }

func (h *httpTransport) get() *http.Transport {
	if h.tr == nil {
		h.tr = &http.Transport{}
	}
	return h.tr
}

func (h *httpTransport) close() { h.get().CloseIdleConnections() }
