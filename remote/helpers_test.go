package remote_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/remote"
	"github.com/leasehold/leasehold/server"
)

// stores are the two stores every test runs on.
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

func eachStore(t *testing.T, fn func(t *testing.T, open func(t *testing.T) leasehold.Driver)) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			fn(t, s.open)
		})
	}
}

// served is a real server over a fresh store behind a loopback listener,
// with the store's client for checks.
type served struct {
	c       *leasehold.Client
	url     string
	token   string // an admin token's bearer secret
	hs      *httptest.Server
	resumes atomic.Int64 // requests that carried Last-Event-ID
}

// serve starts a server over a fresh store with timing t (zero: the
// defaults); with reclaim, the client's reclaimer runs too, as under
// `leasehold serve`.
func serve(t *testing.T, open func(t *testing.T) leasehold.Driver, timing lease.Timing, reclaim bool) *served {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	c, err := leasehold.NewClient(context.Background(), open(t), leasehold.Config{Logger: log})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	if reclaim {
		require.NoError(t, c.StartReclaimer(context.Background()))
	}
	s, err := server.New(c, server.Config{Timing: timing, Logger: log})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	sv := &served{c: c}
	h := s.Handler()
	sv.hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Last-Event-ID") != "" {
			sv.resumes.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(sv.hs.Close)
	sv.url = sv.hs.URL
	sv.token, _, err = c.CreateToken(context.Background(), "test admin", []string{"admin"})
	require.NoError(t, err)
	return sv
}

// client is a client of the server sending the admin token (opts may
// replace it).
func (s *served) client(opts ...remote.Option) *remote.Client {
	return remote.New(s.url, append([]remote.Option{remote.WithToken(s.token)}, opts...)...)
}
