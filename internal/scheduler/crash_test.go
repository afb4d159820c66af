//go:build unix

package scheduler_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/internal/witness"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// The crash test runs a worker in a real second process — this test binary
// re-executed with crashWorkerEnv set, running only TestCrashWorkerProcess —
// and kills it with SIGKILL in the middle of an effect: no deferred code, no
// final write, no goodbye to the store. Everything it leaves behind is what
// a machine that lost power would leave.

// crashWorkerEnv carries the child's crashWorkerConfig (JSON).
const crashWorkerEnv = "LEASEHOLD_CRASH_WORKER"

// crashSignal prefixes the line the child prints on stdout once it is in the
// middle of effect "second", after the witness accepted its call.
const crashSignal = "crash-worker: mid-effect"

// crashTiming is a short run timing, valid under lease.Timing.Validate:
// D_stop + S = 2.5s < T_lease = 3s; T_renew + T_drain = 700ms < D_stop =
// 1.5s. An effect may declare at most T_lease - S - T_renew - T_drain =
// 1.3s.
var crashTiming = lease.Timing{
	Lease: 3 * time.Second,
	Renew: 500 * time.Millisecond,
	Drain: 200 * time.Millisecond,
	Stop:  1500 * time.Millisecond,
	Skew:  time.Second,
	Poll:  200 * time.Millisecond,
}

// crashEffectMax is the effects' declared maximum duration.
const crashEffectMax = time.Second

// crashChildLife bounds the child: if the parent never kills it (the parent
// failed, or died), it exits by itself rather than linger.
const crashChildLife = 30 * time.Second

// crashWorkerConfig is how the parent tells the child which store and
// witness to use.
type crashWorkerConfig struct {
	Driver         string `json:"driver"` // "sqlite" or "postgres"
	SQLitePath     string `json:"sqlite_path,omitempty"`
	PostgresURL    string `json:"postgres_url,omitempty"`
	PostgresSchema string `json:"postgres_schema,omitempty"`
	WitnessURL     string `json:"witness_url"`
}

// crashStore is a store both processes open the same way.
type crashStore interface {
	scheduler.Store
	Migrate(ctx context.Context) (driver.MigrateResult, error)
	Close() error
}

// openCrashStore opens the store named by cfg on the real store clock: the
// Postgres server's clock_timestamp(), or the process clock of whichever
// SQLite process holds the writer lock (both run on this machine).
func openCrashStore(ctx context.Context, cfg crashWorkerConfig, log *slog.Logger) (crashStore, error) {
	switch cfg.Driver {
	case "sqlite":
		// Several processes share the WAL file; busy_timeout (default 10s)
		// makes a writer wait for the other process's lock.
		return sqlite.Open(ctx, sqlite.Config{Path: cfg.SQLitePath, Logger: log})
	case "postgres":
		return postgres.Open(ctx, postgres.Config{URL: cfg.PostgresURL, Schema: cfg.PostgresSchema, Logger: log})
	}
	return nil, fmt.Errorf("unknown driver %q", cfg.Driver)
}

// TestCrashWorkerProcess is the child's body, not a test of its own: it
// runs only when TestCrashedWorkerIsReclaimedWithinBoundAndCompletesElsewhere
// re-executes the test binary with crashWorkerEnv set, and never returns —
// it is killed, or exits non-zero on a failure.
func TestCrashWorkerProcess(t *testing.T) {
	raw := os.Getenv(crashWorkerEnv)
	if raw == "" {
		t.Skip("the crash test's child process; runs only when re-executed by it")
	}
	os.Exit(runCrashWorker(raw))
}

// runCrashWorker is worker "crash-a": it claims the run, does effect
// "first" (committed), emits an event and waits for it to be durable, then
// starts effect "second": the witness accepts the call, the child signals
// the parent on stdout, and blocks until it is killed. Its heartbeat keeps
// renewing the lease meanwhile, as a live worker's would.
func runCrashWorker(raw string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("process", "crash-a")
	fail := func(format string, args ...any) int {
		log.Error(fmt.Sprintf(format, args...))
		return 2
	}
	var cfg crashWorkerConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return fail("decoding %s: %v", crashWorkerEnv, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), crashChildLife)
	defer cancel()
	store, err := openCrashStore(ctx, cfg, log)
	if err != nil {
		return fail("opening the store: %v", err)
	}
	events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: log})
	if err := events.Start(ctx); err != nil {
		return fail("starting the event committer: %v", err)
	}
	wit := witness.NewClient(cfg.WitnessURL, nil)
	w, err := scheduler.NewWorker(store, events, scheduler.WorkerConfig{Owner: "crash-a",
		Queues: map[string]int{"q": 1}, Timing: crashTiming, Logger: log})
	if err != nil {
		return fail("new worker: %v", err)
	}
	failed := make(chan error, 1)
	w.Handle("q", func(ctx context.Context, r *scheduler.Run) error {
		err := func() error {
			if _, err := r.Effect(ctx, "first", crashEffectMax, func(ctx context.Context, tok scheduler.EffectToken) ([]byte, error) {
				return []byte(`{"by":"crash-a"}`), wit.Invoke(ctx, tok.IdempotencyKey, tok.Fence)
			}); err != nil {
				return err
			}
			if err := r.Emit(ctx, "first-done", nil); err != nil {
				return err
			}
			if err := r.Step(ctx); err != nil {
				return err
			}
			_, err := r.Effect(ctx, "second", crashEffectMax, func(ctx context.Context, tok scheduler.EffectToken) ([]byte, error) {
				if err := wit.Invoke(ctx, tok.IdempotencyKey, tok.Fence); err != nil {
					return nil, err
				}
				// os.Stdout is unbuffered: the line is out before we block.
				fmt.Printf("%s run=%d fence=%d\n", crashSignal, r.ID, r.Fence)
				<-make(chan struct{}) // mid-effect until SIGKILL (crashChildLife bounds it)
				return nil, nil
			})
			return fmt.Errorf("effect second returned (%v): the child should have been killed first", err)
		}()
		failed <- err
		return err
	})
	if err := w.Start(ctx); err != nil {
		return fail("starting the worker: %v", err)
	}
	// The parent holds our stdin open; EOF means it went away without
	// killing us, and we must not outlive it.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		failed <- errors.New("stdin closed: the parent went away")
	}()
	select {
	case err := <-failed:
		return fail("handler: %v", err)
	case <-ctx.Done():
		return fail("not killed within %v", crashChildLife)
	}
}

// reclaimSpy hands the test every run the reclaimer reclaims, as the
// store's reclaim statement returned it (fence, reason and scheduled_at
// written by the store at the reclaim).
type reclaimSpy struct {
	driver.RunStore
	reclaimed chan *driver.Run
}

func (s reclaimSpy) RunReclaim(ctx context.Context, p *driver.RunReclaimParams) (*driver.RunReclaimResult, error) {
	res, err := s.RunStore.RunReclaim(ctx, p)
	if err == nil {
		for _, r := range res.Reclaimed {
			select {
			case s.reclaimed <- r:
			default: // the test expects one and checks that no other came
			}
		}
	}
	return res, err
}

// reclaimReason is the reason both drivers write at a reclaim; the expiry
// is the killed holder's last expires_at, on the store clock.
var reclaimReason = regexp.MustCompile(`^lease expired at (\S+) \(owner (\S+), fence (\d+)\)$`)

// TestCrashedWorkerIsReclaimedWithinBoundAndCompletesElsewhere: worker
// process crash-a is killed with SIGKILL in the middle of effect "second",
// after its witness call. Its run is reclaimed within T_lease + P + S of its
// last renewal — both ends read from the store's own timestamps — and
// completes on worker crash-b in this process: crash-b finds "first"
// committed (and does not call it), finds "second" uncertain, reconciles it
// with the witness and resolves it as done. The witness, served over HTTP
// to both processes, accepted each effect exactly once and refused none.
func TestCrashedWorkerIsReclaimedWithinBoundAndCompletesElsewhere(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, drv := range []string{"sqlite", "postgres"} {
		t.Run(drv, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			quiet := slog.New(slog.DiscardHandler)
			wit := witness.New()
			srv := newWitnessServer(t, wit)
			cfg := crashWorkerConfig{Driver: drv, WitnessURL: srv.URL}
			switch drv {
			case "sqlite":
				cfg.SQLitePath = filepath.Join(t.TempDir(), "lh.db")
			case "postgres":
				cfg.PostgresURL, cfg.PostgresSchema = testdb.Schema(t)
			}
			store, err := openCrashStore(ctx, cfg, quiet)
			require.NoError(t, err)
			t.Cleanup(func() { store.Close() })
			_, err = store.Migrate(ctx)
			require.NoError(t, err)
			enq, err := store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", Payload: []byte(`{"order":1}`)}}})
			require.NoError(t, err)
			id := enq[0].Run.ID
			key := func(effect string) string { return fmt.Sprintf("%d:%s", id, effect) } // EffectToken.IdempotencyKey

			// The reclaimer runs from the start, as on every replica: it
			// must leave the live child alone and take the run once it dies.
			reclaimed := make(chan *driver.Run, 4)
			rec := scheduler.NewReclaimer(reclaimSpy{store, reclaimed}, scheduler.ReclaimerConfig{Timing: crashTiming, Logger: quiet})
			require.NoError(t, rec.Start(ctx))
			defer rec.Stop(context.Background())

			// Worker crash-a, in its own process.
			child := startCrashWorker(ctx, t, exe, cfg)
			select {
			case line := <-child.mid:
				require.Equal(t, fmt.Sprintf("%s run=%d fence=1", crashSignal, id), line)
			case <-child.done:
				t.Fatalf("the worker process exited before its mid-effect signal: %v\n%s", child.err, child.stderr.String())
			case <-ctx.Done():
				t.Fatalf("no mid-effect signal from the worker process: %v", ctx.Err())
			}
			// Let a renewal land after the claim, so the lease the kill
			// strands was renewed by the heartbeat, not only set by the
			// claim. The child is a real process: poll the row, bounded.
			claimed, err := store.RunGet(ctx, &driver.RunGetParams{ID: id})
			require.NoError(t, err)
			require.Equal(t, runs.StateRunning, claimed.State)
			require.Equal(t, "crash-a", claimed.Owner)
			require.Equal(t, int64(1), claimed.Fence)
			var live *driver.Run
			require.Eventually(t, func() bool {
				row, err := store.RunGet(ctx, &driver.RunGetParams{ID: id})
				if err != nil || !row.ExpiresAt.After(claimed.ExpiresAt) {
					return false
				}
				live = row
				return true
			}, 4*crashTiming.Renew, crashTiming.Renew/10, "crash-a's heartbeat renewed its lease")
			require.Empty(t, reclaimed, "a live holder was reclaimed")

			// SIGKILL, mid-effect.
			require.NoError(t, child.cmd.Process.Kill())
			killed := time.Now()
			<-child.done
			var exit *exec.ExitError
			require.ErrorAs(t, child.err, &exit)
			ws, ok := exit.Sys().(syscall.WaitStatus)
			require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "child ended by %v, not SIGKILL\n%s", exit, child.stderr.String())

			// The reclaim, as the store wrote it.
			var r *driver.Run
			select {
			case r = <-reclaimed:
			case <-ctx.Done():
				t.Fatalf("the run was not reclaimed: %v", ctx.Err())
			}
			sinceKill := time.Since(killed)
			require.Equal(t, id, r.ID)
			require.Equal(t, runs.StateAvailable, r.State)
			require.Equal(t, int64(2), r.Fence)
			m := reclaimReason.FindStringSubmatch(r.Reason)
			require.NotNil(t, m, "reclaim reason %q", r.Reason)
			require.Equal(t, []string{"crash-a", "1"}, m[2:])
			lastExpiry, err := time.Parse(time.RFC3339Nano, m[1])
			require.NoError(t, err)
			require.False(t, lastExpiry.Before(live.ExpiresAt), "the stranded expiry %v is the one last seen (%v) or a later renewal's", lastExpiry, live.ExpiresAt)
			// The store wrote expires_at = its now + T_lease at the last
			// renewal it committed, and reclaimed_at = its now at the
			// reclaim: both ends are store timestamps.
			lastRenewal := lastExpiry.Add(-crashTiming.Lease)
			reclaimedAt := r.ReclaimedAt
			strand := reclaimedAt.Sub(lastRenewal)
			bound := crashTiming.Lease + crashTiming.Poll + crashTiming.Skew
			t.Logf("%s: stranded %v after the last renewal (bound T_lease+P+S = %v; %v past expiry); store times: renewal %s, expiry %s, reclaim %s; kill to reclaim seen %v (wall)",
				drv, strand, bound, reclaimedAt.Sub(lastExpiry), lastRenewal.Format(time.RFC3339Nano), lastExpiry.Format(time.RFC3339Nano),
				reclaimedAt.Format(time.RFC3339Nano), sinceKill.Round(time.Millisecond))
			require.False(t, reclaimedAt.Before(lastExpiry), "reclaimed at %v, before its expiry %v", reclaimedAt, lastExpiry)
			require.LessOrEqual(t, strand, bound, "reclaimed %v after the last renewal, past T_lease + P + S", strand)

			// Worker crash-b, in this process, started only after the
			// reclaim so the claim it makes is fence 3.
			events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: quiet})
			require.NoError(t, events.Start(context.Background()))
			defer events.Stop(context.Background())
			wc := witness.NewClient(srv.URL, srv.Client())
			b, err := scheduler.NewWorker(store, events, scheduler.WorkerConfig{Owner: "crash-b",
				Queues: map[string]int{"q": 1}, Timing: crashTiming, Logger: quiet})
			require.NoError(t, err)
			mustNotRun := func(effect string) func(context.Context, scheduler.EffectToken) ([]byte, error) {
				return func(context.Context, scheduler.EffectToken) ([]byte, error) {
					return nil, fmt.Errorf("effect %q was called again", effect)
				}
			}
			var uncertain []*scheduler.UncertainEffectError
			bDone := make(chan error, 1)
			b.Handle("q", func(ctx context.Context, r *scheduler.Run) error {
				err := func() error {
					res, err := r.Effect(ctx, "first", crashEffectMax, mustNotRun("first"))
					if err != nil {
						return fmt.Errorf("first: %w", err)
					}
					if string(res) != `{"by":"crash-a"}` {
						return fmt.Errorf("first: result %s, want crash-a's", res)
					}
					_, err = r.Effect(ctx, "second", crashEffectMax, mustNotRun("second"))
					var ue *scheduler.UncertainEffectError
					if !errors.As(err, &ue) {
						return fmt.Errorf("second: %v, want it uncertain", err)
					}
					uncertain = append(uncertain, ue)
					// Reconcile with the downstream system, by idempotency key
					// and with this holder's token, so a lower one is refused
					// from now on.
					happened, err := wc.Reconcile(ctx, key("second"), r.Fence)
					if err != nil {
						return err
					}
					if err := r.ResolveEffect(ctx, "second", happened, []byte(`{"reconciled":true}`)); err != nil {
						return err
					}
					if _, err := r.Effect(ctx, "second", crashEffectMax, mustNotRun("second")); err != nil {
						return fmt.Errorf("second after resolving: %w", err)
					}
					if err := r.Emit(ctx, "done", []byte(`{"by":"crash-b"}`)); err != nil {
						return err
					}
					r.SetResult([]byte(`{"by":"crash-b"}`))
					return r.Step(ctx)
				}()
				bDone <- err
				return err
			})
			require.NoError(t, b.Start(ctx))
			select {
			case err := <-bDone:
				require.NoError(t, err)
			case <-ctx.Done():
				t.Fatalf("crash-b did not finish the run: %v", ctx.Err())
			}
			require.NoError(t, b.Stop(ctx))

			// Completed by crash-b on fence 3: claim 1, reclaim 2, claim 3.
			done, err := store.RunGet(ctx, &driver.RunGetParams{ID: id})
			require.NoError(t, err)
			require.Equal(t, runs.StateCompleted, done.State)
			require.Equal(t, int64(3), done.Fence)
			require.Equal(t, 2, done.Attempt)
			require.JSONEq(t, `{"by":"crash-b"}`, string(done.Result))
			evs, err := store.RunEventList(ctx, &driver.RunEventListParams{RunID: id})
			require.NoError(t, err)
			var kinds []string
			for _, ev := range evs {
				kinds = append(kinds, fmt.Sprintf("%d:%s", ev.Fence, ev.Kind))
			}
			require.Equal(t, []string{"1:first-done", "3:done"}, kinds)
			effs, err := store.RunEffectList(ctx, &driver.RunEffectListParams{RunID: id})
			require.NoError(t, err)
			settled := map[string]string{}
			for _, e := range effs {
				require.True(t, e.Committed, e.Key)
				settled[e.Key] = string(e.Result)
			}
			require.Equal(t, map[string]string{"first": `{"by":"crash-a"}`, "second": `{"reconciled":true}`}, settled)

			// The witness: each effect accepted exactly once, nothing
			// refused, and the one crash-b could not be sure of was
			// reported uncertain (intent under crash-a's fence), not re-run.
			require.Len(t, uncertain, 1)
			require.Equal(t, "second", uncertain[0].Key)
			require.Equal(t, int64(1), uncertain[0].IntentFence)
			require.Equal(t, map[string]int{key("first"): 1, key("second"): 1}, wit.Accepted())
			require.Equal(t, []witness.Invocation{
				{Key: key("first"), Fence: 1, Accepted: true},
				{Key: key("second"), Fence: 1, Accepted: true},
			}, wit.Invocations())
			t.Logf("%s: witness accepted %v, %d invocation(s) in all, none refused; %d uncertain report(s)",
				drv, wit.Accepted(), len(wit.Invocations()), len(uncertain))
			require.Empty(t, reclaimed, "the run was reclaimed once only")
		})
	}
}

// newWitnessServer serves w on 127.0.0.1 for the test and the child.
func newWitnessServer(t *testing.T, w *witness.Witness) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(w.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// crashChild is a running worker process.
type crashChild struct {
	cmd    *exec.Cmd
	mid    chan string   // the mid-effect signal line
	done   chan struct{} // closed once the process was waited for
	err    error         // cmd.Wait's, valid after done
	stderr *bytes.Buffer // valid after done
}

// startCrashWorker re-executes the test binary as worker crash-a. The
// child is killed and waited for when the test ends, whatever happened.
func startCrashWorker(ctx context.Context, t *testing.T, exe string, cfg crashWorkerConfig) *crashChild {
	t.Helper()
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestCrashWorkerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashWorkerEnv+"="+string(raw))
	c := &crashChild{cmd: cmd, mid: make(chan string, 1), done: make(chan struct{}), stderr: &bytes.Buffer{}}
	cmd.Stderr = c.stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	// Held open for the child's life: it exits on EOF, so it cannot
	// outlive this process. Wait closes it.
	_, err = cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, crashSignal) {
				select {
				case c.mid <- line:
				default:
				}
			}
		}
		// Wait only after every read from the pipe is done (os/exec's rule).
		c.err = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-c.done
		if t.Failed() {
			t.Logf("worker process stderr:\n%s", c.stderr.String())
		}
	})
	return c
}
