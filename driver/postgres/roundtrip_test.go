package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/drivertest"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/journal"
)

// countingConn counts the writes a client makes. pgx buffers a pipeline
// and flushes it once at its Sync, then waits for the answers, so each
// write is one network round trip.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
	// stmts counts the statements sent: Execute messages of the extended
	// protocol and simple Query messages. pgx writes whole messages, so
	// each write is read message by message (type byte, int32 length).
	stmts *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	if c.stmts != nil {
		for m := b; len(m) >= 5; {
			if m[0] == 'E' || m[0] == 'Q' {
				c.stmts.Add(1)
			}
			n := 1 + int(binary.BigEndian.Uint32(m[1:5]))
			if n < 5 || n > len(m) {
				break // a startup message (no type byte) or a split write
			}
			m = m[n:]
		}
	}
	return c.Conn.Write(b)
}

// openCounting opens a migrated driver whose connections count their
// writes into the returned counter.
func openCounting(t *testing.T, cfg Config) (*Driver, *atomic.Int64) {
	t.Helper()
	d, writes, _ := openCountingStmts(t, cfg)
	return d, writes
}

// openCountingStmts is openCounting that also counts the statements sent.
func openCountingStmts(t *testing.T, cfg Config) (*Driver, *atomic.Int64, *atomic.Int64) {
	t.Helper()
	var writes, stmts atomic.Int64
	ctx := context.Background()
	d, err := openPools(ctx, cfg, func(pc *pgxpool.Config) {
		dial := pc.ConnConfig.DialFunc
		pc.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{Conn: c, writes: &writes, stmts: &stmts}, nil
		}
	})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	return newDriver(d), &writes, &stmts
}

// TestStatementsPerAppend pins what one append sends in its one round
// trip: one statement (appendOneSQL for a single request; it calls
// leasehold_journal_append itself when it does not simply accept), and
// before it, when the caller has a deadline (the group committer always
// has), the set_config of the server's timeouts — no BEGIN and COMMIT: the pipeline's Sync
// closes its implicit transaction. The store's own one-row commit is one
// statement; the append is two.
func TestStatementsPerAppend(t *testing.T) {
	t.Parallel()
	url, schema := testdb.Schema(t)
	d, writes, stmts := openCountingStmts(t, Config{URL: url, Schema: schema, CriticalConns: 1, GeneralConns: 1})
	ctx := context.Background()
	_, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: "w1", Home: "home", Term: time.Hour})
	require.NoError(t, err)
	pos := int64(1)
	appendOne := func(ctx context.Context) {
		t.Helper()
		out, err := d.JournalAppend(ctx, &driver.JournalAppendParams{World: "w1",
			Requests: []journal.AppendRequest{{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "x", Payload: []byte(`{}`)}}})
		require.NoError(t, err)
		require.NoError(t, out[0].Err)
		pos++
		require.Equal(t, pos, out[0].Position)
	}
	withDeadline := func() {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		appendOne(ctx)
	}
	for _, c := range []struct {
		name  string
		op    func()
		stmts int64
	}{
		{"no deadline: the one statement", func() { appendOne(ctx) }, 1},
		{"deadline: set_config and the one statement", withDeadline, 2},
	} {
		c.op() // warm: prepares the statements
		w0, s0 := writes.Load(), stmts.Load()
		c.op()
		require.Equal(t, int64(1), writes.Load()-w0, c.name+": round trips")
		require.Equal(t, c.stmts, stmts.Load()-s0, c.name+": statements")
	}
	auditHead(t, d, "w1")
}

// TestRoundTripsPerChange pins the cost of the change path on a warm
// connection (statements already prepared): two round trips for an append,
// a lease change and a refused append alike, whatever the store clock.
func TestRoundTripsPerChange(t *testing.T) {
	t.Parallel()
	for _, fake := range []bool{true, false} {
		t.Run(map[bool]string{true: "fake_clock", false: "store_clock"}[fake], func(t *testing.T) {
			t.Parallel()
			url, schema := testdb.Schema(t)
			cfg := Config{URL: url, Schema: schema, CriticalConns: 1, GeneralConns: 1}
			if fake {
				cfg.StoreClock = clock.NewFake(drivertest.StartTime)
			}
			ctx := context.Background()
			d, writes := openCounting(t, cfg)
			var err error
			_, err = d.WorldCreate(ctx, &driver.WorldCreateParams{World: "w1", Home: "home", Term: time.Hour})
			require.NoError(t, err)

			appendOne := func(holder string) {
				t.Helper()
				_, err := d.JournalAppend(ctx, &driver.JournalAppendParams{World: "w1",
					Requests: []journal.AppendRequest{{Holder: holder, Epoch: 1, SeenPosition: 1, Kind: "x", Payload: []byte(`{}`)}}})
				require.NoError(t, err)
			}
			renew := func() {
				t.Helper()
				_, err := d.LeaseChange(ctx, &driver.LeaseChangeParams{World: "w1", Op: "renew",
					Plan: func(w *driver.World, now time.Time) (journal.Plan, error) {
						return journal.PlanRenew(w.State, now, "home", 1, time.Hour)
					}})
				require.NoError(t, err)
			}
			zombies := 0
			newZombie := func() string {
				zombies++
				return fmt.Sprintf("zombie-%d", zombies)
			}
			for _, c := range []struct {
				name  string
				op    func()
				trips int64
			}{
				{"append (one call of leasehold_journal_append)", func() { appendOne("home") }, 1},
				{"renew", renew, 2},
				{"refused append, journaled", func() { appendOne(newZombie()) }, 1},
				{"refused append, not journaled again", func() { appendOne("zombie") }, 1},
			} {
				c.op() // warm: prepares the statements on the pool's one connection
				before := writes.Load()
				c.op()
				require.Equal(t, c.trips, writes.Load()-before, c.name)
			}
			auditHead(t, d, "w1")
		})
	}
}
