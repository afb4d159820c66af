package witness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Handler serves the witness over HTTP, so that processes other than the
// test's own — a worker re-executed as a child process and killed — call
// the same witness, which stays outside the ledger and outlives them:
//
//	POST /invoke?key=K&fence=F   200 accepted; 409 refused (stale token); 400 bad input
//	GET  /has?key=K              200 {"has": true|false}
//	POST /reconcile?key=K&fence=F 200 {"has": true|false}, and tokens below F are refused from now on
func (w *Witness) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /invoke", func(rw http.ResponseWriter, req *http.Request) {
		key := req.URL.Query().Get("key")
		fence, err := strconv.ParseInt(req.URL.Query().Get("fence"), 10, 64)
		if key == "" || err != nil {
			http.Error(rw, "witness: key and an integer fence are required", http.StatusBadRequest)
			return
		}
		if err := w.Invoke(key, fence); err != nil {
			// The only refusal Invoke has: a lower token than one accepted.
			http.Error(rw, err.Error(), http.StatusConflict)
			return
		}
		rw.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("GET /has", func(rw http.ResponseWriter, req *http.Request) {
		key := req.URL.Query().Get("key")
		if key == "" {
			http.Error(rw, "witness: key is required", http.StatusBadRequest)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(hasBody{Has: w.Has(key)})
	})
	mux.HandleFunc("POST /reconcile", func(rw http.ResponseWriter, req *http.Request) {
		key := req.URL.Query().Get("key")
		fence, err := strconv.ParseInt(req.URL.Query().Get("fence"), 10, 64)
		if key == "" || err != nil {
			http.Error(rw, "witness: key and an integer fence are required", http.StatusBadRequest)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(hasBody{Has: w.Reconcile(key, fence)})
	})
	return mux
}

type hasBody struct {
	Has bool `json:"has"`
}

// Client calls a witness served by Handler.
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a client of the witness at baseURL (for example an
// httptest.Server's URL). hc defaults to http.DefaultClient.
func NewClient(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), hc: hc}
}

// Invoke records a call under key with fence, as Witness.Invoke does. A
// refused call returns an error matching ErrStaleToken.
func (c *Client) Invoke(ctx context.Context, key string, fence int64) error {
	q := url.Values{"key": {key}, "fence": {strconv.FormatInt(fence, 10)}}
	status, body, err := c.do(ctx, http.MethodPost, "/invoke?"+q.Encode())
	switch {
	case err != nil:
		return err
	case status == http.StatusOK:
		return nil
	case status == http.StatusConflict:
		return fmt.Errorf("%w (the witness said: %s)", ErrStaleToken, body)
	default:
		return fmt.Errorf("witness: invoke %q: status %d: %s", key, status, body)
	}
}

// Has reports whether a call under key was accepted, as Witness.Has does.
func (c *Client) Has(ctx context.Context, key string) (bool, error) {
	status, body, err := c.do(ctx, http.MethodGet, "/has?"+url.Values{"key": {key}}.Encode())
	if err != nil {
		return false, err
	}
	if status != http.StatusOK {
		return false, fmt.Errorf("witness: has %q: status %d: %s", key, status, body)
	}
	var b hasBody
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		return false, fmt.Errorf("witness: has %q: %w", key, err)
	}
	return b.Has, nil
}

// Reconcile asks, as Witness.Reconcile does, whether a call under key was
// accepted, raising the lowest accepted token to fence.
func (c *Client) Reconcile(ctx context.Context, key string, fence int64) (bool, error) {
	q := url.Values{"key": {key}, "fence": {strconv.FormatInt(fence, 10)}}
	status, body, err := c.do(ctx, http.MethodPost, "/reconcile?"+q.Encode())
	if err != nil {
		return false, err
	}
	if status != http.StatusOK {
		return false, fmt.Errorf("witness: reconcile %q: status %d: %s", key, status, body)
	}
	var b hasBody
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		return false, fmt.Errorf("witness: reconcile %q: %w", key, err)
	}
	return b.Has, nil
}

func (c *Client) do(ctx context.Context, method, path string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, nil)
	if err != nil {
		return 0, "", fmt.Errorf("witness: %w", err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("witness: %w", err)
	}
	defer resp.Body.Close()
	// Small bodies only; the limit keeps a confused server from flooding us.
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return 0, "", fmt.Errorf("witness: reading the answer: %w", err)
	}
	return resp.StatusCode, strings.TrimSpace(string(b)), nil
}
