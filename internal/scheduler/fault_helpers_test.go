package scheduler_test

import (
	"context"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/internal/faultproxy"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/lease"
)

// faultScale divides every timing and every fault of a fault scenario: the
// run defaults (90 s lease, 15 s renew, 5 s drain, 45 s stop, 15 s skew, 1 s
// poll), the Postgres pool's acquire (2 s) and statement (10 s) timeouts,
// the latency (1 s each way: 2 s per round trip) and the stalls (20 s).
const faultScale = 30

func scaledDown(d time.Duration) time.Duration { return d / faultScale }

// faultTiming is lease.RunDefaults() / faultScale.
var faultTiming = func() lease.Timing {
	t := lease.RunDefaults()
	return lease.Timing{Lease: scaledDown(t.Lease), Renew: scaledDown(t.Renew), Drain: scaledDown(t.Drain),
		Stop: scaledDown(t.Stop), Skew: scaledDown(t.Skew), Poll: scaledDown(t.Poll), Margin: scaledDown(t.Margin)}
}()

// faultStores opens, on one fresh schema, a direct store (the reclaimer's,
// the test's own reads) and a store whose connections all go through a
// fault proxy (a worker's), with its pool timeouts scaled down.
func faultStores(t *testing.T) (direct, proxied *postgres.Driver, proxy *faultproxy.Proxy) {
	t.Helper()
	ctx := context.Background()
	dsn, schema := testdb.Schema(t)
	var err error
	direct, err = postgres.Open(ctx, postgres.Config{URL: dsn, Schema: schema})
	require.NoError(t, err)
	t.Cleanup(func() { direct.Close() })
	_, err = direct.Migrate(ctx)
	require.NoError(t, err)

	u, err := url.Parse(dsn)
	require.NoError(t, err)
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "5432")
	}
	proxy, err = faultproxy.New(target)
	require.NoError(t, err)
	t.Cleanup(func() { proxy.Close() })
	u.Host = proxy.Addr()
	// The pool's timeouts are the defaults divided by 10 (acquire 200 ms,
	// statement 1 s), not by faultScale: 67 ms and 333 ms are shorter than
	// the delays of a machine running the whole suite (a renewal UPDATE on
	// a loaded Postgres took longer than 333 ms, failing every drain of a
	// healthy worker until it stopped itself), and they would inject the
	// fault under test uninvited (internal/faulttest's acquireTimeout says
	// more). A blackholed statement is cut by the caller's deadline, not by
	// the server's timeout, so the faults are detected as fast.
	// Open checks a connection within it; a loaded machine can still miss
	// that before any fault is on, so retry.
	for try := 0; ; try++ {
		proxied, err = postgres.Open(ctx, postgres.Config{URL: u.String(), Schema: schema,
			AcquireTimeout:   postgres.DefaultAcquireTimeout / 10,
			StatementTimeout: postgres.DefaultStatementTimeout / 10})
		if err == nil || try == 20 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, err)
	// Closed before the proxy (cleanups run last-in first-out).
	t.Cleanup(func() { proxied.Close() })
	return direct, proxied, proxy
}
