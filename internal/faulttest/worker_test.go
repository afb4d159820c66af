package faulttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/internal/witness"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// A worker process is this test binary re-executed with workerEnv set to
// its workerConfig (JSON); TestMain runs runWorker instead of the tests.

// workerEnv carries a worker process's workerConfig.
const workerEnv = "LEASEHOLD_FAULTTEST_WORKER"

// queue is the one queue of every scenario.
const queue = "faults"

// workerConfig is how the parent tells a worker process what to do.
type workerConfig struct {
	Owner       string       `json:"owner"`
	PostgresURL string       `json:"postgres_url"` // through this worker's own fault proxy
	Schema      string       `json:"schema"`
	ObserverURL string       `json:"observer_url"` // the witness and the report endpoints
	Concurrency int          `json:"concurrency"`
	Timing      lease.Timing `json:"timing"`
	// AcquireTimeout and StatementTimeout are the pool's, scaled like the
	// timing.
	AcquireTimeout   time.Duration `json:"acquire_timeout"`
	StatementTimeout time.Duration `json:"statement_timeout"`
	// Effects is the number of effects per run; each is followed by one
	// event and a Step.
	Effects int `json:"effects"`
	// EffectMax is each effect's declared maximum duration; EffectWork how
	// long an effect takes after the witness accepted it.
	EffectMax  time.Duration `json:"effect_max"`
	EffectWork time.Duration `json:"effect_work"`
	// KillAt names an effect key: the first time this worker invokes it,
	// after the witness accepted the call, the worker signals sigMidEffect
	// and blocks in the effect until it is killed.
	KillAt string `json:"kill_at,omitempty"`
	// PauseAt names an effect key: the first time this worker invokes it,
	// it signals sigPausePoint before calling the witness and waits for
	// the parent's release (the parent stops and continues the process
	// meanwhile); then it makes the late call and writes (see lateCall).
	PauseAt string `json:"pause_at,omitempty"`
	// CutAt names an effect key: the first time this worker invokes it,
	// after the witness accepted the call, it signals sigCutPoint and waits
	// for the parent's release (the parent cuts its link meanwhile), then
	// finishes the effect. So the worker provably holds that run, mid
	// effect, at the moment it is cut off: the scenario waits on this
	// signal, not on a count of events that a loaded machine may race.
	CutAt string `json:"cut_at,omitempty"`
	// Life bounds the process, should the parent never stop it.
	Life time.Duration `json:"life"`
}

// runWorker is a worker process's main. It returns the exit code: 0 after
// a graceful stop (the parent closed our stdin), non-zero on a failure.
func runWorker(raw string) int {
	var cfg workerConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "decoding %s: %v\n", workerEnv, err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("worker", cfg.Owner)
	fail := func(format string, args ...any) int {
		log.Error(fmt.Sprintf(format, args...))
		return 2
	}
	life, cancel := context.WithTimeout(context.Background(), cfg.Life)
	defer cancel()

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	obs := &observerClient{base: cfg.ObserverURL, hc: hc}
	// Start-up is not what the scenarios test, and on a loaded machine the
	// scaled timeouts (a 67ms acquire, a 333ms statement) can fail a first
	// connection or the clock check: retry both, bounded.
	var store *postgres.Driver
	err := retry(life, func() (err error) {
		store, err = postgres.Open(life, postgres.Config{URL: cfg.PostgresURL, Schema: cfg.Schema, Logger: log,
			CriticalConns: 4, GeneralConns: 2, // beside the other scenarios on the shared server's 100 connections
			AcquireTimeout: cfg.AcquireTimeout, StatementTimeout: cfg.StatementTimeout})
		return err
	})
	if err != nil {
		return fail("opening the store: %v", err)
	}
	events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: log})
	if err := events.Start(context.Background()); err != nil {
		return fail("starting the event committer: %v", err)
	}
	w, err := scheduler.NewWorker(store, events, scheduler.WorkerConfig{Owner: cfg.Owner,
		Queues: map[string]int{queue: cfg.Concurrency}, Timing: cfg.Timing, Mode: keeper.ModeWriteBehind,
		Backoff: runs.Backoff{Base: 100 * time.Millisecond, Max: 500 * time.Millisecond}, Logger: log})
	if err != nil {
		return fail("new worker: %v", err)
	}
	h := &handler{cfg: cfg, store: store, obs: obs, wit: witness.NewClient(cfg.ObserverURL, hc), life: life}
	w.Handle(queue, h.work)
	if err := retry(life, func() error { return w.Start(life) }); err != nil {
		return fail("starting the worker: %v", err)
	}
	if err := obs.post(life, "/signal", signalReport{Name: sigStarted, Owner: cfg.Owner}); err != nil {
		return fail("%v", err)
	}

	// The parent holds our stdin open; EOF (it closed it, or died) is the
	// order to stop.
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-eof:
	case <-life.Done():
		return fail("not stopped within %v", cfg.Life)
	}
	sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer scancel()
	code := 0
	if err := w.Stop(sctx); err != nil {
		log.Error("stopping the worker", "err", err)
		code = 3
	}
	if err := events.Stop(sctx); err != nil {
		log.Error("stopping the event committer", "err", err)
		code = 3
	}
	if err := obs.post(sctx, "/stats", statsReport{Owner: cfg.Owner, Keeper: w.Keeper().Stats()}); err != nil {
		log.Error("reporting stats", "err", err)
		code = 3
	}
	_ = store.Close()
	return code
}

// retry calls f until it succeeds, at most 20 times over about 10s.
func retry(ctx context.Context, f func() error) error {
	var err error
	for range 20 {
		if err = f(); err == nil {
			return nil
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		}
	}
	return err
}

// handler works the runs of one worker process.
type handler struct {
	cfg   workerConfig
	store *postgres.Driver
	obs   *observerClient
	wit   *witness.Client
	life  context.Context

	killed, paused, cut atomic.Bool // KillAt / PauseAt / CutAt already happened
}

// effectKey names a run's i-th effect.
func effectKey(i int) string { return fmt.Sprintf("e%d", i) }

// stepPayload is the event emitted after effect i.
func stepPayload(i int, owner string, attempt int) []byte {
	return fmt.Appendf(nil, `{"i":%d,"owner":%q,"attempt":%d}`, i, owner, attempt)
}

// work is the handler of every run: Effects × (effect, event, Step).
func (h *handler) work(ctx context.Context, r *scheduler.Run) error {
	for i := range h.cfg.Effects {
		key := effectKey(i)
		if err := h.effect(ctx, r, key); err != nil {
			return err
		}
		payload := stepPayload(i, h.cfg.Owner, r.Attempt)
		if err := r.Emit(ctx, "step", payload); err != nil {
			return fmt.Errorf("emit after %s: %w", key, err)
		}
		if err := r.Step(ctx); err != nil {
			return fmt.Errorf("step after %s: %w", key, err)
		}
		// Acknowledged: the event must be in the store at the end. This
		// handle emits one event per effect, so its seq is i+1. A lost
		// report only weakens the check, so its failure is not the run's.
		rctx, cancel := context.WithTimeout(h.life, 5*time.Second)
		_ = h.obs.post(rctx, "/ack", ackReport{Owner: h.cfg.Owner, Run: r.ID, Fence: r.Fence, Seq: int64(i + 1),
			Kind: "step", Payload: payload})
		cancel()
	}
	r.SetResult(fmt.Appendf(nil, `{"owner":%q,"fence":%d}`, h.cfg.Owner, r.Fence))
	return nil
}

// effect runs one effect, reconciling it while it is uncertain: report to
// the parent first, then ask the witness whether the key was accepted, and
// resolve accordingly.
func (h *handler) effect(ctx context.Context, r *scheduler.Run, key string) error {
	idem := fmt.Sprintf("%d:%s", r.ID, key) // EffectToken.IdempotencyKey
	for range 4 {
		_, err := r.Effect(ctx, key, h.cfg.EffectMax, func(fctx context.Context, tok scheduler.EffectToken) ([]byte, error) {
			return h.invoke(fctx, r, key, tok)
		})
		var ue *scheduler.UncertainEffectError
		if !errors.As(err, &ue) {
			if err != nil {
				return fmt.Errorf("effect %s: %w", idem, err)
			}
			return nil
		}
		// Reported before anything else: the parent's check is that a
		// second invocation of a key always follows a report of it.
		if err := h.obs.post(ctx, "/uncertain", uncertainReport{Owner: h.cfg.Owner, Key: idem, Fence: r.Fence,
			IntentFence: ue.IntentFence}); err != nil {
			return fmt.Errorf("reporting uncertain %s: %w", idem, err)
		}
		happened, err := h.wit.Reconcile(ctx, idem, r.Fence) // raises the token floor to ours
		if err != nil {
			return fmt.Errorf("reconciling %s: %w", idem, err)
		}
		var result []byte
		if happened {
			result = []byte(`{"reconciled":true}`)
		}
		if err := r.ResolveEffect(ctx, key, happened, result); err != nil {
			return fmt.Errorf("resolving %s (happened=%v): %w", idem, happened, err)
		}
	}
	return fmt.Errorf("effect %s: still uncertain after 4 reconciliations", idem)
}

// invoke is the effect function: the call downstream, then the effect's
// own work.
func (h *handler) invoke(fctx context.Context, r *scheduler.Run, key string, tok scheduler.EffectToken) ([]byte, error) {
	if key == h.cfg.PauseAt && h.paused.CompareAndSwap(false, true) {
		return h.lateCall(fctx, r, key, tok)
	}
	if err := h.wit.Invoke(fctx, tok.IdempotencyKey, tok.Fence); err != nil {
		return nil, err
	}
	if key == h.cfg.KillAt && h.killed.CompareAndSwap(false, true) {
		_ = h.obs.post(h.life, "/signal", signalReport{Name: sigMidEffect, Owner: h.cfg.Owner, Run: r.ID,
			Key: tok.IdempotencyKey, Fence: tok.Fence})
		<-h.life.Done() // mid-effect until SIGKILL (Life bounds it)
		return nil, errors.New("not killed in time")
	}
	if key == h.cfg.CutAt && h.cut.CompareAndSwap(false, true) {
		if err := h.obs.post(h.life, "/signal", signalReport{Name: sigCutPoint, Owner: h.cfg.Owner, Run: r.ID,
			Key: tok.IdempotencyKey, Fence: tok.Fence}); err != nil {
			return nil, err
		}
		if err := h.obs.await(h.life, releaseCut(h.cfg.Owner)); err != nil {
			return nil, err
		}
	}
	select {
	case <-time.After(h.cfg.EffectWork):
	case <-fctx.Done():
		return nil, context.Cause(fctx)
	}
	return fmt.Appendf(nil, `{"by":%q,"fence":%d}`, h.cfg.Owner, tok.Fence), nil
}

// lateCall is the paused process of SPEC §2: the gate passed and the
// intent is recorded, and the process stops right before its call
// downstream. The parent stops it (SIGSTOP) past its lease, lets another
// worker re-run the run, continues it (SIGCONT) and releases it. The call
// it then makes is one that was already past its last cancellation check
// when the process stopped — a request on its way out — so it is made
// without the effect's context, which the keeper cancels on waking: only
// the witness's fence check can stop it now. So do the store's: the
// commit of the effect, the completion of the run and an event, all under
// the stale fence, must be refused. The outcomes go to the parent.
func (h *handler) lateCall(fctx context.Context, r *scheduler.Run, key string, tok scheduler.EffectToken) ([]byte, error) {
	sig := signalReport{Name: sigPausePoint, Owner: h.cfg.Owner, Run: r.ID, Key: tok.IdempotencyKey, Fence: tok.Fence}
	if err := h.obs.post(h.life, "/signal", sig); err != nil {
		return nil, err
	}
	if err := h.obs.await(h.life, releaseLate(h.cfg.Owner)); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(fctx), 10*time.Second)
	defer cancel()
	ierr := h.wit.Invoke(ctx, tok.IdempotencyKey, tok.Fence)
	// The store's answers, not a timeout of a pool just woken on a loaded
	// machine: a write that failed without an answer is sent again.
	cerr := untilAnswered(ctx, func() error {
		_, err := h.store.RunEffectCommit(ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: tok.Fence, Key: key,
			Result: []byte(`{"late":true}`)})
		return err
	})
	perr := untilAnswered(ctx, func() error {
		_, err := h.store.RunComplete(ctx, &driver.RunCompleteParams{ID: r.ID, Fence: tok.Fence, Result: []byte(`{"late":true}`)})
		return err
	})
	serr := r.Emit(ctx, "late", nil)
	if serr == nil {
		serr = r.Step(ctx) // the event committer retries until the store answers
	}
	sig.Name, sig.Detail = sigLate, map[string]string{
		"invoke":   outcome(ierr, witness.ErrStaleToken, "refused"),
		"commit":   outcome(cerr, lease.ErrFenced, "fenced"),
		"complete": outcome(perr, lease.ErrFenced, "fenced"),
		"step":     outcome(serr, lease.ErrFenced, "fenced"),
	}
	if err := h.obs.post(ctx, "/signal", sig); err != nil {
		return nil, err
	}
	if ierr == nil {
		return nil, errors.New("the witness accepted the late call")
	}
	return nil, ierr
}

// untilAnswered calls write until the store answers it — success or one
// of its refusals — or ctx ends.
func untilAnswered(ctx context.Context, write func() error) error {
	for {
		err := write()
		if err == nil || errors.Is(err, lease.ErrFenced) || errors.Is(err, lease.ErrLeaseExpired) ||
			errors.Is(err, lease.ErrConflict) || errors.Is(err, lease.ErrNotFound) || errors.Is(err, lease.ErrInvalid) {
			return err
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}

// releaseCut names the release a worker waits for at its cut point.
func releaseCut(owner string) string { return "cut-" + owner }

// releaseLate names the release a paused worker waits for.
func releaseLate(owner string) string { return "late-" + owner }

// outcome names err: "ok", name when it is want, else the error.
func outcome(err, want error, name string) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, want):
		return name
	}
	return "error: " + err.Error()
}
