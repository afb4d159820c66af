package scale

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/internal/witness"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// procEnv carries a process's procConfig (JSON).
const procEnv = "LEASEHOLD_SCALE_PROCESS"

const queue = "scale"

// timing is the run defaults divided by 30, as in internal/faulttest: a
// killed process's runs come back within seconds.
var timing = func() lease.Timing {
	d := lease.RunDefaults()
	const scale = 30
	return lease.Timing{Lease: d.Lease / scale, Renew: d.Renew / scale, Drain: d.Drain / scale, Stop: d.Stop / scale,
		Skew: d.Skew / scale, Poll: d.Poll / scale, Margin: d.Margin / scale}
}()

// procConfig is how the parent tells a process what to do.
type procConfig struct {
	Owner       string        `json:"owner"`
	URL         string        `json:"url"`
	Schema      string        `json:"schema"`
	ObserverURL string        `json:"observer_url"`
	Slots       int           `json:"slots"`
	Effects     int           `json:"effects"`
	Appenders   int           `json:"appenders"` // concurrent appenders to this process's world
	Life        time.Duration `json:"life"`
}

// Reports a process sends the parent.
type eventAck struct {
	Run, Fence, Seq int64
	Payload         string
}

type appendAck struct {
	World, Key string
	Pos        int64
}

type keyReport struct{ Key string }

// runProcess is a process's main: a Client on the shared schema, a worker,
// the reclaimer and a world holder. Stdin closing or SIGTERM stops it
// gracefully (exit 0); SIGKILL is the parent's other way.
func runProcess(raw string) int {
	var cfg procConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "decoding %s: %v\n", procEnv, err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})).With("process", cfg.Owner)
	fail := func(format string, args ...any) int {
		log.Error(fmt.Sprintf(format, args...))
		return 2
	}
	life, cancel := context.WithTimeout(context.Background(), cfg.Life)
	defer cancel()
	stop, stopSignals := signal.NotifyContext(life, syscall.SIGTERM)
	defer stopSignals()

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Second}
	rep := &reporter{base: cfg.ObserverURL, hc: hc}
	wit := witness.NewClient(cfg.ObserverURL, hc)

	d, err := postgres.Open(life, postgres.Config{URL: cfg.URL, Schema: cfg.Schema, Logger: log,
		CriticalConns: 4, GeneralConns: 4})
	if err != nil {
		return fail("opening the store: %v", err)
	}
	c, err := leasehold.NewClient(life, d, leasehold.Config{SkipMigrate: true, Logger: log,
		WorldTiming: lease.Timing{Lease: 10 * time.Minute}})
	if err != nil {
		return fail("client: %v", err)
	}
	defer c.Close()
	// What every replica runs, none special: the reclaimer and the
	// world expiry sweeper.
	if err := c.StartReclaimer(context.Background()); err != nil {
		return fail("reclaimer: %v", err)
	}
	if err := c.StartSweeper(context.Background()); err != nil {
		return fail("sweeper: %v", err)
	}
	w, err := c.NewWorker(leasehold.WorkerConfig{Owner: cfg.Owner, Queues: map[string]int{queue: cfg.Slots}, Timing: timing,
		Backoff: runs.Backoff{Base: 50 * time.Millisecond, Max: 300 * time.Millisecond}, Logger: log})
	if err != nil {
		return fail("worker: %v", err)
	}
	w.Handle(queue, func(ctx context.Context, r *leasehold.RunHandle) error { return work(ctx, r, cfg, wit, rep) })
	if err := w.Start(context.Background()); err != nil {
		return fail("starting the worker: %v", err)
	}
	world := "w-" + cfg.Owner
	wd, err := c.CreateWorld(life, world, cfg.Owner)
	if err != nil {
		return fail("creating %s: %v", world, err)
	}
	appendCtx, stopAppends := context.WithCancel(context.Background())
	defer stopAppends()
	appendsDone := make(chan struct{}, cfg.Appenders)
	for a := range cfg.Appenders {
		go func() {
			defer func() { appendsDone <- struct{}{} }()
			appendLoop(appendCtx, c, rep, world, cfg.Owner, wd.Epoch, wd.GrantedAt, a)
		}()
	}
	if err := rep.post(life, "/started", keyReport{Key: cfg.Owner}); err != nil {
		return fail("%v", err)
	}

	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-eof:
	case <-stop.Done():
		if life.Err() != nil {
			return fail("not stopped within %v", cfg.Life)
		}
	}
	stopAppends()
	for range cfg.Appenders {
		<-appendsDone
	}
	sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer scancel()
	if err := w.Stop(sctx); err != nil {
		return fail("stopping the worker: %v", err)
	}
	if err := c.Close(); err != nil {
		return fail("closing: %v", err)
	}
	return 0
}

// work is every run's handler: effects × (effect through the witness,
// event, Step), each acknowledgement reported to the parent.
func work(ctx context.Context, r *leasehold.RunHandle, cfg procConfig, wit *witness.Client, rep *reporter) error {
	for i := range cfg.Effects {
		key := fmt.Sprintf("e%d", i)
		if err := effect(ctx, r, key, wit, rep); err != nil {
			return err
		}
		payload := fmt.Sprintf(`{"i":%d,"fence":%d}`, i, r.Fence)
		if err := r.Emit(ctx, "step", []byte(payload)); err != nil {
			return err
		}
		if err := r.Step(ctx); err != nil {
			return err
		}
		if err := rep.post(ctx, "/ack/event", eventAck{Run: r.ID, Fence: r.Fence, Seq: int64(i + 1), Payload: payload}); err != nil {
			return err
		}
	}
	return r.SetResult(fmt.Appendf(nil, `{"by":%q}`, cfg.Owner))
}

// effect calls the witness with the token; an uncertain effect is reported
// first, then reconciled with the witness and resolved.
func effect(ctx context.Context, r *leasehold.RunHandle, key string, wit *witness.Client, rep *reporter) error {
	idem := fmt.Sprintf("%d:%s", r.ID, key)
	for range 4 {
		_, err := r.Effect(ctx, key, 400*time.Millisecond, func(fctx context.Context, tok leasehold.EffectToken) ([]byte, error) {
			return nil, wit.Invoke(fctx, tok.IdempotencyKey, tok.Fence)
		})
		var ue *leasehold.UncertainEffectError
		if !errors.As(err, &ue) {
			return err
		}
		if err := rep.post(ctx, "/uncertain", keyReport{Key: idem}); err != nil {
			return err
		}
		happened, err := wit.Reconcile(ctx, idem, r.Fence)
		if err != nil {
			return err
		}
		if err := r.ResolveEffect(ctx, key, happened, nil); err != nil {
			return err
		}
	}
	return fmt.Errorf("effect %s still uncertain", idem)
}

// appendLoop appends keyed entries until ctx ends; an append without an
// answer is sent again with its key (journaled once whatever happened).
func appendLoop(ctx context.Context, c *leasehold.Client, rep *reporter, world, owner string, epoch, seen int64, n int) {
	for k := 0; ctx.Err() == nil; k++ {
		key := fmt.Sprintf("%s-%d-%d", owner, n, k)
		for ctx.Err() == nil {
			actx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			pos, err := c.Append(actx, leasehold.AppendParams{World: world, Holder: owner, Epoch: epoch, SeenPosition: seen,
				Kind: "op", Key: key, Payload: fmt.Appendf(nil, `{"k":%d}`, k)})
			cancel()
			if err == nil {
				rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
				_ = rep.post(rctx, "/ack/append", appendAck{World: world, Key: key, Pos: pos})
				rcancel()
				break
			}
		}
	}
}

// reporter posts JSON reports to the parent.
type reporter struct {
	base string
	hc   *http.Client
}

func (r *reporter) post(ctx context.Context, path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return fmt.Errorf("reporting %s: %w", path, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("reporting %s: status %d", path, resp.StatusCode)
	}
	return nil
}
