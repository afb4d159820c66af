package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// WebhookEffector runs effects by HTTP: Invoke POSTs the EffectCall as JSON
// to URL and takes a 2xx body as the result; Reconcile GETs
// URL?idempotency_key=…&epoch=… and reads {"happened": bool, "result": …}.
// The downstream service should keep, per idempotency key, the highest
// epoch (fence token) it has seen — in a call or in a reconcile — and
// refuse calls below it: then not even a holder whose lease an operator
// revoked while it still believed in its runway, or a paused one, can make
// an effect happen twice (a reconcile under epoch e fences out every call
// of an earlier epoch still in flight; docs/design/worlds.md).
type WebhookEffector struct {
	URL    string
	Client *http.Client // defaults to http.DefaultClient
}

var _ Reconciler = (*WebhookEffector)(nil)

func (w *WebhookEffector) client() *http.Client {
	if w.Client != nil {
		return w.Client
	}
	return http.DefaultClient
}

// Invoke implements Effector.
func (w *WebhookEffector) Invoke(ctx context.Context, c EffectCall) (json.RawMessage, error) {
	body, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return w.do(req)
}

// Reconcile implements Reconciler.
func (w *WebhookEffector) Reconcile(ctx context.Context, c EffectCall) (bool, json.RawMessage, error) {
	u, err := url.Parse(w.URL)
	if err != nil {
		return false, nil, err
	}
	q := u.Query()
	q.Set("idempotency_key", c.IdempotencyKey)
	q.Set("epoch", strconv.FormatInt(c.Epoch, 10))
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return false, nil, err
	}
	b, err := w.do(req)
	if err != nil {
		return false, nil, err
	}
	var r struct {
		Happened bool            `json:"happened"`
		Result   json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return false, nil, fmt.Errorf("effect webhook: reconcile answer: %v", err)
	}
	return r.Happened, r.Result, nil
}

func (w *WebhookEffector) do(req *http.Request) (json.RawMessage, error) {
	resp, err := w.client().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("effect webhook %s %s: %s: %s", req.Method, w.URL, resp.Status, bytes.TrimSpace(b))
	}
	return b, nil
}
