package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// lineWatcher is an io.Writer that hands over the first line matching re.
type lineWatcher struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	re    *regexp.Regexp
	found chan string
	sent  bool
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := w.re.FindStringSubmatch(w.buf.String()); m != nil && !w.sent {
		w.sent = true
		w.found <- m[1]
	}
	return len(p), nil
}

func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestServeWalkthrough is the README's curl walkthrough against a real
// `leasehold serve` on the embedded store: enqueue → claim → complete,
// the run read back completed, then SIGINT's path (the context ending)
// shuts the server down and says what it did.
func TestServeWalkthrough(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lh.db")
	out := &lineWatcher{re: regexp.MustCompile(`listening on (http://\S+)`), found: make(chan string, 1)}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	code := make(chan int, 1)
	var errOut bytes.Buffer
	go func() { code <- run(ctx, []string{"serve", "--db", db, "--listen", "127.0.0.1:0"}, out, &errOut) }()
	var base string
	select {
	case base = <-out.found:
	case c := <-code:
		t.Fatalf("serve exited %d: %s %s", c, out, errOut.String())
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	// A zero-flag start on an empty store mints an admin token and prints
	// it once, before it listens.
	m := regexp.MustCompile(`admin token: (lh_\S+)`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "%s", out)
	token := m[1]
	post := func(path, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Less(t, resp.StatusCode, 300, "%s: %s", path, b)
		var v map[string]any
		require.NoError(t, json.Unmarshal(b, &v))
		return v
	}
	anon, err := hc.Post(base+"/v1/runs", "application/json", strings.NewReader(`{"runs":[{"queue":"emails"}]}`))
	require.NoError(t, err)
	anon.Body.Close()
	require.Equal(t, http.StatusUnauthorized, anon.StatusCode, "no token, no call")
	post("/v1/runs", `{"runs":[{"queue":"emails","payload":{"to":"ada@example.com"},"unique_key":"welcome-ada"}]}`)
	claimed := post("/v1/runs/claim", `{"queue":"emails","owner":"runner-1","limit":10,"wait_ms":1000}`)
	runs := claimed["runs"].([]any)
	require.Len(t, runs, 1)
	r := runs[0].(map[string]any)
	require.Positive(t, r["runway_ms"].(float64))
	id := int64(r["id"].(float64))
	require.Equal(t, float64(1), r["fence"])
	done := post("/v1/runs/"+itoa(id)+"/complete", `{"fence":1,"result":{"sent":true}}`)
	require.Equal(t, "completed", done["run"].(map[string]any)["state"])

	stop()
	require.Equal(t, 0, <-code, "%s %s", out, errOut.String())
	text := out.String()
	require.Contains(t, text, "leasehold serve: shutting down")
	require.Contains(t, text, "1 runs claimed through this server")
	require.Contains(t, text, "store closed")
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
