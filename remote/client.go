package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client calls one `leasehold serve`. It is safe for concurrent use.
type Client struct {
	base  string
	http  *http.Client
	token string
}

// Option configures a Client.
type Option func(*Client)

// WithToken sends Authorization: Bearer token with every request.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithHTTPClient sets the HTTP client (transport, TLS, proxies). Defaults
// to one with a transport of its own, keeping up to 256 idle connections
// to the server: a worker's calls reuse them.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// New returns a client of the server at baseURL ("http://127.0.0.1:7460").
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/")}
	for _, o := range opts {
		o(c)
	}
	if c.http == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256
		c.http = &http.Client{Transport: tr}
	}
	return c
}

// CloseIdleConnections closes the client's idle connections.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// call sends in as JSON (nil: no body) and decodes a 2xx answer into out
// (nil: discarded); any other answer is returned as a *Problem (or an
// error naming the status when the body is not one). It returns the send
// time: the origin of any runway in the answer.
func (c *Client) call(ctx context.Context, method, path string, in, out any) (sent time.Time, err error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return time.Time{}, fmt.Errorf("remote: encoding %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return time.Time{}, fmt.Errorf("remote: %s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	sent = time.Now() // before the request leaves: the runway's origin
	resp, err := c.http.Do(req)
	if err != nil {
		return sent, fmt.Errorf("remote: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return sent, fmt.Errorf("remote: %s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		p := &Problem{}
		if json.Unmarshal(raw, p) != nil || p.Type == "" {
			return sent, fmt.Errorf("remote: %s %s: status %d: %.200s", method, path, resp.StatusCode, raw)
		}
		return sent, p
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return sent, fmt.Errorf("remote: %s %s: decoding the answer: %w", method, path, err)
		}
	}
	return sent, nil
}

// AsProblem returns err's *Problem, if it is one.
func AsProblem(err error) (*Problem, bool) {
	var p *Problem
	ok := errors.As(err, &p)
	return p, ok
}
