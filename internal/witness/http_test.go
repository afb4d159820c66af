package witness_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/witness"
)

// TestHTTPClientSeesTheSameWitness: calls through the HTTP client land in
// the served witness with the same rules — a lower token than one accepted
// is refused with ErrStaleToken, an equal or higher one accepted — and Has
// answers as the witness itself does.
func TestHTTPClientSeesTheSameWitness(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := witness.New()
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	c := witness.NewClient(srv.URL+"/", srv.Client())

	require.NoError(t, c.Invoke(ctx, "7:charge", 2))
	require.ErrorIs(t, c.Invoke(ctx, "7:charge", 1), witness.ErrStaleToken)
	require.NoError(t, c.Invoke(ctx, "7:charge", 2), "an equal token is the same holder retrying")
	require.NoError(t, c.Invoke(ctx, "7:email", 1), "tokens are per key")

	has, err := c.Has(ctx, "7:charge")
	require.NoError(t, err)
	require.True(t, has)
	has, err = c.Has(ctx, "7:sms")
	require.NoError(t, err)
	require.False(t, has)

	require.Equal(t, map[string]int{"7:charge": 2, "7:email": 1}, w.Accepted())
	require.Equal(t, []witness.Invocation{
		{Key: "7:charge", Fence: 2, Accepted: true},
		{Key: "7:charge", Fence: 1, Accepted: false},
		{Key: "7:charge", Fence: 2, Accepted: true},
		{Key: "7:email", Fence: 1, Accepted: true},
	}, w.Invocations())
}

// TestHTTPHandlerRefusesBadRequests: a missing key or fence is a 400 and
// records nothing; a wrong method is a 405.
func TestHTTPHandlerRefusesBadRequests(t *testing.T) {
	t.Parallel()
	w := witness.New()
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	for name, tc := range map[string]struct {
		method, path string
		status       int
	}{
		"no key":        {http.MethodPost, "/invoke?fence=1", http.StatusBadRequest},
		"no fence":      {http.MethodPost, "/invoke?key=k", http.StatusBadRequest},
		"bad fence":     {http.MethodPost, "/invoke?key=k&fence=one", http.StatusBadRequest},
		"has no key":    {http.MethodGet, "/has", http.StatusBadRequest},
		"invoke by GET": {http.MethodGet, "/invoke?key=k&fence=1", http.StatusMethodNotAllowed},
	} {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, nil)
			require.NoError(t, err)
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
		})
	}
	require.Empty(t, w.Invocations())

	_, err := witness.NewClient(srv.URL, srv.Client()).Has(context.Background(), "")
	require.ErrorContains(t, err, "status 400")
}

// TestHTTPReconcileRaisesTheFloor: reconciling over HTTP answers as Has
// does and refuses lower tokens afterwards.
func TestHTTPReconcileRaisesTheFloor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := witness.New()
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	c := witness.NewClient(srv.URL, srv.Client())
	has, err := c.Reconcile(ctx, "9:charge", 3)
	require.NoError(t, err)
	require.False(t, has)
	require.ErrorIs(t, c.Invoke(ctx, "9:charge", 1), witness.ErrStaleToken, "the paused holder's late, lower call")
	require.NoError(t, c.Invoke(ctx, "9:charge", 3))
	has, err = c.Reconcile(ctx, "9:charge", 3)
	require.NoError(t, err)
	require.True(t, has)
	_, err = c.Reconcile(ctx, "9:charge", 0)
	require.NoError(t, err)
	_, err = witness.NewClient(srv.URL, srv.Client()).Reconcile(ctx, "", 1)
	require.Error(t, err)
}
