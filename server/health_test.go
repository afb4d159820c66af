package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// TestHealthReadinessAndMetrics: /healthz and /readyz answer on a live
// store; /metrics is Prometheus text carrying the request counts by route
// pattern (never the raw path) and the runs claimed.
func TestHealthReadinessAndMetrics(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		var st struct{ Status string }
		b.get(t, "/healthz").ok(t, &st)
		require.Equal(t, "ok", st.Status)
		b.get(t, "/readyz").ok(t, &st)
		require.Equal(t, "ready", st.Status)
		b.enqueue(t, "q", `{}`)
		b.claimOne(t, "q", "o")
		b.get(t, "/v1/runs/424242")
		m := b.get(t, "/metrics")
		require.Equal(t, http.StatusOK, m.status)
		text := string(m.body)
		require.Contains(t, text, `leasehold_http_requests_total{code="201",route="POST /v1/runs"} 1`)
		require.Contains(t, text, `leasehold_http_requests_total{code="404",route="GET /v1/runs/{id}"} 1`)
		require.Contains(t, text, "leasehold_runs_claimed_total 1")
		require.False(t, strings.Contains(text, "424242"), "a raw path in a label")
		if b.c.Driver().Name() == "postgres" {
			require.Contains(t, text, "leasehold_pool_max_conns{pool=", "the store's pools")
		}
	})
}
