package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/leasehold/leasehold"
)

// apiClient is the CLI's one client of a running `leasehold serve`: the
// base URL and bearer token of --server/--token, and a JSON call that
// turns the server's problem documents back into the library's sentinels,
// so a command talking to the server exits with the same code as one
// talking to the store (exitcode.go).
type apiClient struct {
	base, token string
	hc          *http.Client // nil: http.DefaultClient
}

// callTimeout bounds one call: an admin call answers at once, so a server
// that does not is a failure to report, not to wait on.
const callTimeout = 30 * time.Second

// call sends one JSON request (in, when not nil) and decodes a 2xx answer
// into out; any other answer is an error quoting its problem document and
// wrapping the sentinel its status stands for.
func (c *apiClient) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.base, "/")+path, body)
	if err != nil {
		return usagef("--server %q: %v", c.base, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	hc := c.hc
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		msg := resp.Status
		var p struct{ Title, Detail string }
		if json.Unmarshal(b, &p) == nil && p.Title != "" {
			msg = p.Title + ": " + p.Detail
		}
		if s := statusSentinel(resp.StatusCode); s != nil {
			return fmt.Errorf("%s %s: %s: %w", method, path, msg, s)
		}
		return fmt.Errorf("%s %s: %s", method, path, msg)
	}
	return json.Unmarshal(b, out)
}

// statusSentinel is the sentinel an HTTP status stands for (the server
// maps them the other way, server/problem.go), or nil.
func statusSentinel(status int) error {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusRequestEntityTooLarge:
		return leasehold.ErrInvalid
	case http.StatusNotFound:
		return leasehold.ErrNotFound
	case http.StatusConflict:
		return leasehold.ErrConflict
	}
	return nil
}
