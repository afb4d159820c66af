package faultproxy_test

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/faultproxy"
	"github.com/leasehold/leasehold/internal/testdb"
)

// TestPostgresThroughProxy shows the intended use: pgx dials the proxy, and
// a blackhole turns a query into a client-side timeout.
func TestPostgresThroughProxy(t *testing.T) {
	t.Parallel()
	// testdb.URL skips loudly without a reachable Postgres, and fails
	// under CI=true: CI never passes by skipping.
	cfg, err := pgx.ParseConfig(testdb.URL(t))
	require.NoError(t, err)
	if strings.HasPrefix(cfg.Host, "/") {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Postgres is on a unix socket (%s); the proxy is TCP only: CI needs a TCP URL", cfg.Host)
		}
		t.Skipf("Postgres is on a unix socket (%s); the proxy is TCP only", cfg.Host)
	}

	p, err := faultproxy.New(net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	viaProxy(t, cfg, p.Addr())

	ctx := t.Context()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	requireSelectOne(ctx, t, conn)
	require.Positive(t, p.Stats().BytesToClient)

	p.SetBlackhole(true)
	qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	var one int
	err = conn.QueryRow(qctx, "SELECT 1").Scan(&one)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), ioTimeout)

	// Lifting the blackhole resets the broken link, which also lets pgx's
	// asynchronous close of that connection (cancel request, Terminate,
	// drain) finish instead of running into its own 15 s deadline.
	p.SetBlackhole(false)
	select {
	case <-conn.PgConn().CleanupDone():
	case <-time.After(ioTimeout):
		t.Fatal("pgx did not finish closing the broken connection")
	}

	fresh, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = fresh.Close(context.Background()) })
	requireSelectOne(ctx, t, fresh)
}

// viaProxy points cfg, and any fallbacks (sslmode=prefer adds one), at the
// proxy. The TLS server name stays that of the real host.
func viaProxy(t *testing.T, cfg *pgx.ConnConfig, addr string) {
	t.Helper()
	host, portStr, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	port, err := strconv.ParseUint(portStr, 10, 16)
	require.NoError(t, err)
	cfg.Host, cfg.Port = host, uint16(port)
	for _, fb := range cfg.Fallbacks {
		fb.Host, fb.Port = host, uint16(port)
	}
}

func requireSelectOne(ctx context.Context, t *testing.T, conn *pgx.Conn) {
	t.Helper()
	var one int
	require.NoError(t, conn.QueryRow(ctx, "SELECT 1").Scan(&one))
	require.Equal(t, 1, one)
}
