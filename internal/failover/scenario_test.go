package failover

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/internal/witness"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// scale divides the run defaults, as in internal/faulttest: T_lease 3s,
// T_renew 500ms, T_drain ≈167ms, D_stop 1.5s, S 500ms, P ≈33ms. An outage
// (kill to promotion) of about a second is within D_stop on a quiet
// machine and past it on a loaded one: both paths are the protocol's.
const scale = 30

var timing = func() lease.Timing {
	d := lease.RunDefaults()
	return lease.Timing{Lease: d.Lease / scale, Renew: d.Renew / scale, Drain: d.Drain / scale, Stop: d.Stop / scale,
		Skew: d.Skew / scale, Poll: d.Poll / scale, Margin: d.Margin / scale}
}()

const (
	queue      = "failover"
	worldID    = "ledger"
	holder     = "holder-1"
	effects    = 3                      // per run, each followed by an event and a Step
	effectMax  = 400 * time.Millisecond // see internal/faulttest: fits D_stop less normal lag
	effectWork = 20 * time.Millisecond
	slots      = 3 // per worker
	patience   = 60 * time.Second
)

// scenario is the load on the pair: runs worked by two workers, appends by
// one world holder, everything acknowledged noted in the ledger.
type scenario struct {
	t       *testing.T
	pair    *pair
	l       *ledger
	c       *leasehold.Client
	wit     *witness.Witness
	ids     []int64
	workers []*leasehold.Worker

	appendStop chan struct{}
	appendDone chan struct{}
	appendErr  atomic.Value // the appender's last unexpected error (string)
	appendOnce sync.Once
}

// newScenario opens Leasehold on the pair's multi-host URL, enqueues runs,
// creates the world and starts the workers, the reclaimer and the
// appender.
func newScenario(t *testing.T, p *pair, nRuns int) *scenario {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)
	d, err := postgres.Open(ctx, postgres.Config{URL: p.url(), Logger: quiet,
		// As in internal/faulttest: the defaults divided by 10, so a
		// write to the dead primary fails fast and is retried.
		AcquireTimeout: postgres.DefaultAcquireTimeout / 10, StatementTimeout: postgres.DefaultStatementTimeout / 10})
	require.NoError(t, err)
	s := &scenario{t: t, pair: p, l: newLedger(), wit: witness.NewIdempotent(),
		appendStop: make(chan struct{}), appendDone: make(chan struct{})}
	// The world's lease outlives the test: the world holder's renewals
	// are not what is tested here, its appends are.
	s.c, err = leasehold.NewClient(ctx, &recorder{Driver: d, l: s.l}, leasehold.Config{Logger: quiet,
		WorldTiming: lease.Timing{Lease: 10 * time.Minute}, CloseTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.c.Close() })

	es := make([]leasehold.Enqueue, nRuns)
	for i := range es {
		es[i] = leasehold.Enqueue{Queue: queue, Payload: fmt.Appendf(nil, `{"n":%d}`, i)}
	}
	enq, err := s.c.Enqueue(ctx, es...)
	require.NoError(t, err)
	for _, e := range enq {
		s.ids = append(s.ids, e.Run.ID)
	}
	w, err := s.c.CreateWorld(ctx, worldID, holder)
	require.NoError(t, err)
	require.NoError(t, s.c.StartReclaimer(context.Background()))

	for _, owner := range []string{"worker-a", "worker-b"} {
		wk, err := s.c.NewWorker(leasehold.WorkerConfig{Owner: owner, Queues: map[string]int{queue: slots}, Timing: timing,
			Backoff: runs.Backoff{Base: 50 * time.Millisecond, Max: 300 * time.Millisecond}, Logger: quiet})
		require.NoError(t, err)
		wk.Handle(queue, s.work)
		require.NoError(t, wk.Start(context.Background())) // its context is its life
		s.workers = append(s.workers, wk)
	}
	t.Cleanup(s.stopWorkers)
	go s.appendLoop(w.Epoch, w.GrantedAt)
	t.Cleanup(s.stopAppender)
	return s
}

// work is every run's handler: effects × (effect, event, Step).
func (s *scenario) work(ctx context.Context, r *leasehold.RunHandle) error {
	s.l.claimed(r.ID, r.Fence)
	for i := range effects {
		key := fmt.Sprintf("e%d", i)
		if err := s.effect(ctx, r, key); err != nil {
			return err
		}
		payload := fmt.Sprintf(`{"i":%d,"fence":%d}`, i, r.Fence)
		if err := r.Emit(ctx, "step", []byte(payload)); err != nil {
			return err
		}
		if err := r.Step(ctx); err != nil {
			return err
		}
		// One event per effect under this fence, so its seq is i+1.
		s.l.event(r.ID, r.Fence, int64(i+1), payload, time.Now())
	}
	return r.SetResult(fmt.Appendf(nil, `{"fence":%d}`, r.Fence))
}

// effect runs one effect; one left uncertain (its intent recorded, its
// commit unknown — a kill between the two) is reported, reconciled with
// the witness and resolved: never assumed either way. The witness is an
// idempotent downstream: it refuses a lower fence than it accepted for the
// key, and answers a key it already applied with its first result — what
// the effect then commits.
func (s *scenario) effect(ctx context.Context, r *leasehold.RunHandle, key string) error {
	idem := fmt.Sprintf("%d:%s", r.ID, key)
	for range 4 {
		_, err := r.Effect(ctx, key, effectMax, func(fctx context.Context, tok leasehold.EffectToken) ([]byte, error) {
			rep, err := s.wit.Apply(tok.IdempotencyKey, tok.Fence, fmt.Appendf(nil, `{"fence":%d}`, tok.Fence))
			if err != nil {
				return nil, err
			}
			s.l.invoked(idem, tok.Fence, rep.Deduped)
			select {
			case <-time.After(effectWork):
			case <-fctx.Done():
				return nil, context.Cause(fctx)
			}
			return rep.Result, nil
		})
		var ue *leasehold.UncertainEffectError
		if !errors.As(err, &ue) {
			return err
		}
		s.l.uncertainReport(idem) // before the witness is asked: a second call must follow a report
		happened := s.wit.Reconcile(idem, r.Fence)
		var result []byte
		if happened {
			result = []byte(`{"reconciled":true}`)
		}
		if err := r.ResolveEffect(ctx, key, happened, result); err != nil {
			return err
		}
	}
	return fmt.Errorf("effect %s still uncertain after 4 reconciliations", idem)
}

// appendLoop appends entries with keys a0, a1, … one after the other. An
// append that fails without an answer has an unknown outcome: it is sent
// again with the same key until answered — a key already journaled answers
// its first position and writes nothing — so it is never assumed either
// way.
func (s *scenario) appendLoop(epoch, seen int64) {
	defer close(s.appendDone)
	for k := 0; ; k++ {
		key := fmt.Sprintf("a%d", k)
		start := time.Now()
		for {
			select {
			case <-s.appendStop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			pos, err := s.c.Append(ctx, leasehold.AppendParams{World: worldID, Holder: holder, Epoch: epoch, SeenPosition: seen,
				Kind: "op", Key: key, Payload: fmt.Appendf(nil, `{"k":%d}`, k)})
			cancel()
			if err == nil {
				s.l.appended(key, pos, start, time.Now())
				break
			}
			if errors.Is(err, lease.ErrInvalid) || errors.Is(err, lease.ErrFenced) {
				s.appendErr.Store(err.Error()) // an answer, not an outage: the check fails on it
				return
			}
			s.l.unknownOutcome()
			select {
			case <-time.After(20 * time.Millisecond):
			case <-s.appendStop:
				return
			}
		}
		// A steady trickle, not a flood of WAL.
		select {
		case <-time.After(5 * time.Millisecond):
		case <-s.appendStop:
			return
		}
	}
}

func (s *scenario) stopAppender() {
	s.appendOnce.Do(func() { close(s.appendStop) })
	<-s.appendDone
}

func (s *scenario) stopWorkers() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, w := range s.workers {
		_ = w.Stop(ctx)
	}
}

// awaitLoad waits until at least completions, events and appends are
// acknowledged.
func (s *scenario) awaitLoad(completions, events, appends int) {
	s.t.Helper()
	var c, e, a int
	ok := assert.Eventually(s.t, func() bool {
		c, e, a = s.l.counts()
		return c >= completions && e >= events && a >= appends
	}, patience, 5*time.Millisecond)
	if !ok {
		s.t.Fatalf("the load did not reach %d completions, %d events, %d appends: %d, %d, %d; appender: %v; runs: %s",
			completions, events, appends, c, e, a, s.appendErr.Load(), s.runStates())
	}
}

// awaitFinal waits until every run is final.
func (s *scenario) awaitFinal() {
	s.t.Helper()
	pending := 0
	require.Eventually(s.t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		pending = 0
		for _, id := range s.ids {
			r, err := s.c.Run(ctx, id)
			if err != nil || !r.State.Final() {
				pending++
			}
		}
		return pending == 0
	}, 2*patience, 50*time.Millisecond, "runs still not final")
}

// runStates tallies the runs by state and reason, for a failure message.
func (s *scenario) runStates() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tally := map[string]int{}
	for _, id := range s.ids {
		r, err := s.c.Run(ctx, id)
		if err != nil {
			tally["error: "+err.Error()]++
			continue
		}
		tally[fmt.Sprintf("%s %.80s", r.State, r.Reason)]++
	}
	return fmt.Sprint(tally)
}
