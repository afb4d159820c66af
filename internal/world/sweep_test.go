package world_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/lease"
)

var sweepStart = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// forEachFakeDriver runs fn against a fresh, migrated store of each driver
// whose store clock is a fake, so expiry is reached by Advance.
func forEachFakeDriver(t *testing.T, fn func(t *testing.T, d driver.Driver, c *clock.Fake)) {
	ctx := context.Background()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		c := clock.NewFake(sweepStart)
		d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db"), Clock: c})
		require.NoError(t, err)
		t.Cleanup(func() { d.Close() })
		_, err = d.Migrate(ctx)
		require.NoError(t, err)
		fn(t, d, c)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		c := clock.NewFake(sweepStart)
		url, schema := testdb.Schema(t)
		d, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: schema, StoreClock: c})
		require.NoError(t, err)
		t.Cleanup(func() { d.Close() })
		_, err = d.Migrate(ctx)
		require.NoError(t, err)
		fn(t, d, c)
	})
}

const sweepTerm = 30 * time.Second

func createWorlds(t *testing.T, d driver.Driver, n int, term time.Duration, format string) {
	for i := range n {
		_, err := d.WorldCreate(context.Background(), &driver.WorldCreateParams{World: fmt.Sprintf(format, i), Home: "home", Term: term})
		require.NoError(t, err)
	}
}

// TestSweepExpiredRepeatsBoundedBatches: 25 expired worlds, batches of 10:
// every one swept in one call, each batch bounded.
func TestSweepExpiredRepeatsBoundedBatches(t *testing.T) {
	t.Parallel()
	forEachFakeDriver(t, func(t *testing.T, d driver.Driver, c *clock.Fake) {
		ctx := context.Background()
		createWorlds(t, d, 25, sweepTerm, "w%02d")
		c.Advance(sweepTerm - time.Microsecond)
		rep, err := world.SweepExpired(ctx, d, 10)
		require.NoError(t, err)
		require.Zero(t, rep.Candidates, "nothing expires early")
		c.Advance(time.Microsecond)
		rep, err = world.SweepExpired(ctx, d, 10)
		require.NoError(t, err)
		require.Equal(t, 25, rep.Candidates)
		require.Len(t, rep.Swept, 25)
		require.Empty(t, rep.Skipped)
		for i, sw := range rep.Swept {
			require.Equal(t, fmt.Sprintf("w%02d", i), sw.World)
			require.Equal(t, sweepStart.Add(sweepTerm), sw.ExpiredAt)
			require.Equal(t, int64(2), sw.Granted.Epoch)
			require.Equal(t, "home", sw.Granted.Holder)
		}
	})
}

// TestConcurrentSweepersSweepEveryExpiredWorld: two sweepers scanning the
// same candidates each sweep only part of every batch; between them every
// world is swept exactly once in one period.
func TestConcurrentSweepersSweepEveryExpiredWorld(t *testing.T) {
	t.Parallel()
	forEachFakeDriver(t, func(t *testing.T, d driver.Driver, c *clock.Fake) {
		ctx := context.Background()
		const n = 300
		createWorlds(t, d, n, sweepTerm, "w%03d")
		c.Advance(sweepTerm)
		var wg sync.WaitGroup
		var swept [2]int
		for i := range 2 {
			wg.Go(func() {
				s := world.NewSweeper(d, c, lease.WorldDefaults(), slog.New(slog.DiscardHandler))
				var err error
				swept[i], err = s.SweepOnce(ctx)
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		require.Equal(t, n, swept[0]+swept[1])
		left, err := d.LeaseScanExpired(ctx, &driver.LeaseScanParams{})
		require.NoError(t, err)
		require.Empty(t, left, "nothing left expired after one period")
	})
}

// unsweepable sets the default term of worlds to 0, reaching under the
// driver: a head row the sweep cannot plan a grant from. The API no longer
// makes one (a default term is kept in whole milliseconds, rounded up:
// journal.NormalizeTerm); a store written before can still hold one.
func unsweepable(t *testing.T, d driver.Driver, like string) {
	q := "UPDATE worlds SET default_term_us = 0 WHERE id LIKE '" + like + "'"
	var err error
	switch d := d.(type) {
	case *sqlite.Driver:
		err = sqlite.ExecForTest(context.Background(), d, q)
	case *postgres.Driver:
		err = postgres.ExecForTest(context.Background(), d, q)
	default:
		t.Fatalf("no raw SQL for %T", d)
	}
	require.NoError(t, err)
}

// TestSweepSkipsWorldsItCannotPlan (issue 17, defect 15): worlds whose
// expired lease cannot be re-granted (a default term of 0: once a term
// below the journal's microsecond resolution) fill every batch, earliest expiry
// first. The sweep used to rescan them whenever a batch came back full,
// stop when a full batch made no progress, and so never reach the healthy
// world behind them. Now each is skipped and reported, with ErrUnsweepable
// (ErrInvalid), and the healthy world is swept in the same call.
func TestSweepSkipsWorldsItCannotPlan(t *testing.T) {
	t.Parallel()
	forEachFakeDriver(t, func(t *testing.T, d driver.Driver, c *clock.Fake) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		createWorlds(t, d, 5, time.Millisecond, "stuck%d")
		unsweepable(t, d, "stuck%")
		createWorlds(t, d, 1, sweepTerm, "healthy%d")
		c.Advance(sweepTerm)
		rep, err := world.SweepExpired(ctx, d, 2)
		require.ErrorIs(t, err, world.ErrUnsweepable)
		require.ErrorIs(t, err, driver.ErrInvalid)
		require.Equal(t, []string{"stuck0", "stuck1", "stuck2", "stuck3", "stuck4"}, rep.Skipped)
		require.Len(t, rep.Swept, 1)
		require.Equal(t, "healthy0", rep.Swept[0].World)
		require.Equal(t, 6, rep.Candidates, "each candidate visited once")
		require.NoError(t, ctx.Err())
	})
}

// TestSweeperOnceIsNotHeldUpByAFullBatchOfStuckWorlds (issue 17, defect
// 15, the issue's own reproduction through the sweeper's loop): 100
// worlds whose expired lease cannot be re-granted fill the sweeper's
// whole batch, earliest expiry first, with one healthy expired world
// behind them. SweepOnce used to rescan the full batch until its deadline
// and never reach the healthy world (under Start, whose context never
// ends, it never returned). Now it visits each of the 101 candidates once
// — counted off the pass's report, not timed: a loaded box may take
// seconds for 101 conditional writes — sweeps the healthy world, and
// reports the stuck ones as an error matching ErrInvalid. The deadline
// only bounds a regression that would loop.
func TestSweeperOnceIsNotHeldUpByAFullBatchOfStuckWorlds(t *testing.T) {
	t.Parallel()
	forEachFakeDriver(t, func(t *testing.T, d driver.Driver, c *clock.Fake) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		createWorlds(t, d, 100, time.Millisecond, "stuck%03d")
		unsweepable(t, d, "stuck%")
		createWorlds(t, d, 1, sweepTerm, "healthy%d")
		c.Advance(sweepTerm)
		s := world.NewSweeper(d, c, lease.WorldDefaults(), slog.New(slog.DiscardHandler))
		var pass *world.SweepReport
		s.SetRuntime(rt.Real(c), func(rep *world.SweepReport, _ error) { pass = rep })
		n, err := s.SweepOnce(ctx)
		require.NoError(t, ctx.Err(), "the sweep ran until its deadline")
		require.NotNil(t, pass)
		require.Equal(t, 101, pass.Candidates, "each candidate visited once, none rescanned")
		require.Equal(t, 1, n, "the healthy world is swept in the same call")
		require.ErrorIs(t, err, driver.ErrInvalid, "the stuck worlds are reported")
		w, err := d.WorldGet(context.Background(), &driver.WorldGetParams{World: "healthy0"})
		require.NoError(t, err)
		require.Equal(t, "home", w.Holder)
		require.Equal(t, int64(2), w.Epoch, "re-granted to its home")
	})
}
