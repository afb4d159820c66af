package doctor_test

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/doctor"
	"github.com/leasehold/leasehold/internal/testdb"
)

// The real drivers are sampled on the real clock, briefly: a few probes a
// few milliseconds apart are enough to see the store answer and the figures
// come out sane.
const (
	realProbes = 10
	realEvery  = 5 * time.Millisecond
)

// TestSQLiteStoreClock: SQLite's store clock is this process's wall clock,
// so against the same process's monotonic clock the offset is ~0.
func TestSQLiteStoreClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db")})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })

	ps, err := doctor.Sample(ctx, d, clock.Real(), realProbes, realEvery)
	require.NoError(t, err)
	for _, p := range ps {
		require.NotContains(t, p.Store.String(), "m=", "the store reading must not carry a monotonic reading")
	}
	r := doctor.Analyze(ps, runs)
	t.Logf("sqlite:\n%s", r)
	require.LessOrEqual(t, abs(r.Offset), r.OffsetBound+doctor.StepTolerance)
	require.Empty(t, r.Steps)
	require.NoError(t, r.CheckWriteBehind(runs))
}

// TestPostgresStoreClock samples clock_timestamp() of the test server. It
// skips loudly when no server answers (see internal/testdb).
func TestPostgresStoreClock(t *testing.T) {
	t.Parallel()
	u := testdb.URL(t)
	ctx := context.Background()
	d, err := postgres.Open(ctx, postgres.Config{URL: u})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })

	ps, err := doctor.Sample(ctx, d, clock.Real(), realProbes, realEvery)
	require.NoError(t, err)
	r := doctor.Analyze(ps, runs)
	t.Logf("postgres:\n%s", r)
	require.Positive(t, r.RTTMin, "a round trip to a server takes time")
	require.Empty(t, r.Steps)
	require.NoError(t, r.CheckWriteBehind(runs))
	if loopback(u) {
		// Same host, same clock: ~0, give or take clock_timestamp()'s
		// microsecond resolution.
		require.LessOrEqual(t, abs(r.Offset), r.OffsetBound+doctor.StepTolerance)
	}
}

func loopback(u string) bool {
	pu, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := pu.Hostname()
	return h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.")
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
