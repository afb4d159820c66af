package remote_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/internal/witness"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/remote"
	"github.com/leasehold/leasehold/runs"
)

// pauseTiming is scaled down so a paused worker's lease expires, and is
// reclaimed, within seconds.
var pauseTiming = lease.Timing{Lease: 3 * time.Second, Renew: 500 * time.Millisecond, Drain: 100 * time.Millisecond,
	Stop: 1500 * time.Millisecond, Skew: 500 * time.Millisecond, Poll: 100 * time.Millisecond, Margin: 100 * time.Millisecond}

// The child: a remote worker in another process, re-executed from this
// test binary (as internal/faulttest does), whose effect tells the parent
// it is about to call downstream, then waits for a line on stdin before
// calling — so the parent can SIGSTOP it exactly there.
const (
	childEnv        = "LEASEHOLD_REMOTE_PAUSE_CHILD"
	childServerEnv  = "LEASEHOLD_REMOTE_PAUSE_SERVER"
	childWitnessEnv = "LEASEHOLD_REMOTE_PAUSE_WITNESS"
	childTokenEnv   = "LEASEHOLD_REMOTE_PAUSE_TOKEN"
)

// TestRemotePauseChild is the child's body; it is skipped unless the
// parent test started it.
func TestRemotePauseChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("the child process of TestAPausedRemoteWorkerIsFencedOut")
	}
	c := remote.New(os.Getenv(childServerEnv), remote.WithToken(os.Getenv(childTokenEnv)))
	wit := witness.NewClient(os.Getenv(childWitnessEnv), nil)
	stdin := bufio.NewReader(os.Stdin)
	w, err := remote.NewWorker(remote.WorkerConfig{Client: c, Owner: "zombie", Queues: map[string]int{"pay": 1}, Wait: 100 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	require.NoError(t, err)
	done := make(chan struct{})
	w.Handle("pay", func(ctx context.Context, r *leasehold.RunHandle) error {
		defer close(done)
		var late []string
		_, err := r.Effect(ctx, "charge", time.Second, func(ctx context.Context, tok leasehold.EffectToken) ([]byte, error) {
			fmt.Printf("PAUSE %d %d %s\n", r.ID, tok.Fence, tok.IdempotencyKey)
			if _, err := stdin.ReadString('\n'); err != nil { // the parent stops us here, then says go
				return nil, err
			}
			// A call already on its way: it ignores the handler's context,
			// as a paused process's in-flight call would.
			if err := wit.Invoke(context.Background(), tok.IdempotencyKey, tok.Fence); err != nil {
				late = append(late, "invoke=refused")
			} else {
				late = append(late, "invoke=accepted")
			}
			return []byte(`{"charged":"zombie"}`), nil
		})
		late = append(late, "commit="+outcome(err))
		_, err = c.Complete(context.Background(), r.ID, r.Fence, []byte(`{"by":"zombie"}`))
		late = append(late, "complete="+outcome(err))
		err = c.Emit(context.Background(), r.ID, r.Fence, remote.Event{Seq: 1, Kind: "late"})
		late = append(late, "emit="+outcome(err))
		fmt.Printf("LATE %s\n", strings.Join(late, " "))
		return err
	})
	require.NoError(t, w.Start(context.Background()))
	<-done
	stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = w.Stop(stop)
}

func outcome(err error) string {
	switch {
	case err == nil:
		return "accepted"
	case errors.Is(err, leasehold.ErrFenced):
		return "fenced"
	case errors.Is(err, leasehold.ErrLeaseLost):
		return "lease-lost"
	}
	return "error:" + err.Error()
}

// TestAPausedRemoteWorkerIsFencedOut (must-show 3): a remote worker in a
// child process passes the server's gate for an effect, records its
// intent and is stopped with SIGSTOP right before its call downstream. It
// stays stopped past its lease: the reclaimer takes the run back, and a
// second remote worker claims it, finds the effect uncertain, reconciles
// with the witness (which raises its token floor), resolves it as not
// happened and runs it under its higher fence. Then the child is
// continued and makes its call with its old fence: the witness refuses
// it, and the store refuses its effect commit, completion and event as
// fenced. The effect was accepted downstream once; the run completed
// once, by the second worker.
func TestAPausedRemoteWorkerIsFencedOut(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		ctx := context.Background()
		s := serve(t, open, pauseTiming, true)
		wit := witness.New()
		ws := httptest.NewServer(wit.Handler())
		t.Cleanup(ws.Close)
		e, err := s.c.Enqueue(ctx, leasehold.Enqueue{Queue: "pay", Payload: []byte(`{}`)})
		require.NoError(t, err)
		id := e[0].Run.ID

		cmd := exec.Command(os.Args[0], "-test.run=^TestRemotePauseChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"=1", childServerEnv+"="+s.url, childWitnessEnv+"="+ws.URL, childTokenEnv+"="+s.token)
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) // the process this test started
		lines := make(chan string, 16)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		bound := time.After(2 * time.Minute) // a bound on a loaded machine, not a timing guess
		expect := func(prefix string) string {
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("the child ended before %q", prefix)
					}
					if strings.HasPrefix(l, prefix) {
						return strings.TrimPrefix(l, prefix)
					}
				case <-bound:
					t.Fatalf("no %q from the child within the bound", prefix)
				}
			}
		}

		var runID, zombieFence int64
		var key string
		_, err = fmt.Sscanf(expect("PAUSE "), "%d %d %s", &runID, &zombieFence, &key)
		require.NoError(t, err)
		require.Equal(t, id, runID)
		require.NoError(t, cmd.Process.Signal(syscall.SIGSTOP))

		// The rescuer: another remote worker, here, with the reconcile a
		// handler owes an uncertain effect.
		wc := witness.NewClient(ws.URL, nil)
		rescued := make(chan int64, 1)
		w, err := remote.NewWorker(remote.WorkerConfig{Client: s.client(), Owner: "rescuer", Queues: map[string]int{"pay": 1}, Wait: 100 * time.Millisecond,
			Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		w.Handle("pay", func(ctx context.Context, r *leasehold.RunHandle) error {
			call := func(ctx context.Context, tok leasehold.EffectToken) ([]byte, error) {
				return []byte(`{"charged":"rescuer"}`), wc.Invoke(ctx, tok.IdempotencyKey, tok.Fence)
			}
			res, err := r.Effect(ctx, "charge", time.Second, call)
			var u *leasehold.UncertainEffectError
			if errors.As(err, &u) {
				has, rerr := wc.Reconcile(ctx, key, r.Fence)
				if rerr != nil {
					return rerr
				}
				if err := r.ResolveEffect(ctx, "charge", has, nil); err != nil {
					return err
				}
				res, err = r.Effect(ctx, "charge", time.Second, call)
			}
			if err != nil {
				return err
			}
			rescued <- r.Fence
			return r.SetResult(res)
		})
		require.NoError(t, w.Start(ctx))
		rescuerFence := <-rescued
		stop, cancel := context.WithTimeout(ctx, 30*time.Second)
		require.NoError(t, w.Stop(stop)) // waits for the completion
		cancel()
		require.Greater(t, rescuerFence, zombieFence)
		done, err := s.c.Run(ctx, id)
		require.NoError(t, err)
		require.Equal(t, runs.StateCompleted, done.State)

		require.NoError(t, cmd.Process.Signal(syscall.SIGCONT))
		_, err = io.WriteString(stdin, "go\n")
		require.NoError(t, err)
		late := expect("LATE ")
		require.Equal(t, "invoke=refused commit=fenced complete=fenced emit=fenced", late, "the stale holder's late call and writes")

		require.Equal(t, 1, wit.Accepted()[key], "the effect was accepted downstream once: %v", wit.Invocations())
		calls := wit.Invocations()
		require.Equal(t, witness.Invocation{Key: key, Fence: zombieFence, Accepted: false}, calls[len(calls)-1], "the late call came last, refused")
		after, err := s.c.Run(ctx, id)
		require.NoError(t, err)
		require.Equal(t, done, after, "the late writes changed nothing")
		require.JSONEq(t, `{"charged":"rescuer"}`, string(after.Result))
		evs, err := s.c.Events(ctx, id, 0, 0, 0)
		require.NoError(t, err)
		require.Empty(t, evs)
	})
}
