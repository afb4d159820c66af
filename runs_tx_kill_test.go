package leasehold_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/testdb"
)

// The caller's business row and its run, written in one transaction by a
// process that is SIGKILLed between the statements — after the first,
// after the second (before COMMIT), or after COMMIT — in either order:
// afterwards the store holds both or neither, never one without the other,
// and a committed run is claimed.

// enqueueTxChildEnv carries the child's enqueueTxChild as JSON.
const enqueueTxChildEnv = "LEASEHOLD_ENQUEUETX_CHILD"

// enqueueTxStop is the line the child prints where it stops to be killed.
const enqueueTxStop = "leasehold-enqueuetx-stopped"

// enqueueTxChild is what one child process does.
type enqueueTxChild struct {
	Driver         string
	SQLitePath     string
	PostgresURL    string
	PostgresSchema string
	Order          int  // the business row's id; the run goes to queue "ship-<Order>"
	RunFirst       bool // enqueue the run before writing the business row
	StopAfter      int  // 1: after the first statement, 2: after the second, 3: after COMMIT
}

func (c enqueueTxChild) open(ctx context.Context) (leasehold.Driver, error) {
	if c.Driver == "sqlite" {
		return sqlite.Open(ctx, sqlite.Config{Path: c.SQLitePath})
	}
	return postgres.Open(ctx, postgres.Config{URL: c.PostgresURL, Schema: c.PostgresSchema, Logger: slog.New(slog.DiscardHandler)})
}

// TestEnqueueTxChildProcess is the child's body, not a test of its own: it
// runs only when TestEnqueueTxKilledBetweenStatementsNeverSplits
// re-executes the test binary with enqueueTxChildEnv set, and never
// returns — it is killed, or exits non-zero on a failure.
func TestEnqueueTxChildProcess(t *testing.T) {
	raw := os.Getenv(enqueueTxChildEnv)
	if raw == "" {
		t.Skip("the EnqueueTx kill test's child process; runs only when re-executed by it")
	}
	os.Exit(runEnqueueTxChild(raw))
}

func runEnqueueTxChild(raw string) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
		return 2
	}
	var cfg enqueueTxChild
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return fail("decoding %s: %v", enqueueTxChildEnv, err)
	}
	ctx := context.Background()
	d, err := cfg.open(ctx)
	if err != nil {
		return fail("open: %v", err)
	}
	c, err := leasehold.NewClient(ctx, d, leasehold.Config{SkipMigrate: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fail("client: %v", err)
	}
	tx, err := beginCallerTx(ctx, d)
	if err != nil {
		return fail("begin: %v", err)
	}
	business := func() error {
		return tx.exec(ctx, fmt.Sprintf(`INSERT INTO orders (id) VALUES (%d)`, cfg.Order))
	}
	run := func() error {
		_, err := c.EnqueueTx(ctx, tx.tx, leasehold.Enqueue{Queue: fmt.Sprintf("ship-%d", cfg.Order),
			Payload: fmt.Appendf(nil, `{"order":%d}`, cfg.Order)})
		return err
	}
	steps := []func() error{business, run, func() error { return tx.commit(ctx) }}
	if cfg.RunFirst {
		steps[0], steps[1] = run, business
	}
	for i, step := range steps {
		if err := step(); err != nil {
			return fail("step %d: %v", i+1, err)
		}
		if i+1 == cfg.StopAfter {
			fmt.Printf("%s %d\n", enqueueTxStop, i+1)
			_, _ = io.Copy(io.Discard, os.Stdin) // until killed (or the parent is gone: EOF)
			return fail("stdin closed before the kill")
		}
	}
	return fail("StopAfter %d is not a step", cfg.StopAfter)
}

// killAt runs one child to its stop and SIGKILLs it there.
func killAt(ctx context.Context, t *testing.T, exe string, cfg enqueueTxChild) {
	t.Helper()
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestEnqueueTxChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), enqueueTxChildEnv+"="+string(raw))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stdin, err := cmd.StdinPipe() // held open: the child blocks on it until killed
	require.NoError(t, err)
	defer stdin.Close()
	require.NoError(t, cmd.Start())
	stopped := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, enqueueTxStop) {
				stopped <- line
			}
		}
		close(stopped)
	}()
	line, ok := <-stopped
	if !ok {
		err := cmd.Wait()
		t.Fatalf("the child ended before its stop: %v\n%s", err, stderr.String())
	}
	require.Equal(t, fmt.Sprintf("%s %d", enqueueTxStop, cfg.StopAfter), line)
	require.NoError(t, cmd.Process.Kill()) // SIGKILL, between the statements
	for range stopped {
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	ws, isWS := exit.Sys().(syscall.WaitStatus)
	require.True(t, isWS && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "child ended by %v, not SIGKILL\n%s", exit, stderr.String())
}

func TestEnqueueTxKilledBetweenStatementsNeverSplits(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, drv := range []string{"sqlite", "postgres"} {
		t.Run(drv, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			base := enqueueTxChild{Driver: drv}
			if drv == "sqlite" {
				base.SQLitePath = filepath.Join(t.TempDir(), "lh.db")
			} else {
				base.PostgresURL, base.PostgresSchema = testdb.Schema(t)
			}
			d, err := base.open(ctx)
			require.NoError(t, err)
			c, err := leasehold.NewClient(ctx, d, leasehold.Config{Logger: slog.New(slog.DiscardHandler)}) // migrates
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			execOn(t, d, `CREATE TABLE orders (id INTEGER PRIMARY KEY)`)

			scenarios := 0
			for _, runFirst := range []bool{false, true} {
				for stop := 1; stop <= 3; stop++ {
					scenarios++
					cfg := base
					cfg.Order, cfg.RunFirst, cfg.StopAfter = scenarios, runFirst, stop
					killAt(ctx, t, exe, cfg)

					queue := fmt.Sprintf("ship-%d", cfg.Order)
					orders := countOn(t, d, fmt.Sprintf(`SELECT count(*) FROM orders WHERE id = %d`, cfg.Order))
					runsN := countOn(t, d, fmt.Sprintf(`SELECT count(*) FROM runs WHERE queue = '%s'`, queue))
					committed := stop == 3
					what := fmt.Sprintf("run first=%v, killed after step %d", runFirst, stop)
					require.Equal(t, orders, runsN, "%s: %d business rows, %d runs: one without the other", what, orders, runsN)
					require.Equal(t, committed, orders == 1, what)
					// The store takes writes after the kill (SQLite: the
					// dead process's lock is gone), and only a committed
					// run is ever claimed.
					got, err := c.Driver().RunClaim(ctx, &driver.RunClaimParams{Queue: queue, Owner: "parent", Limit: 10, Lease: time.Minute})
					require.NoError(t, err)
					require.Len(t, got, runsN, what)
				}
			}
			t.Logf("%s: %d kills between or after the statements; business row and run always together", drv, scenarios)
		})
	}
}
