package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/runs"
)

// proc is one worker process. A crash ends its generation: every thread of
// it unwinds, its keeper and contexts are dropped; a restart is a new
// owner with a new keeper, as a restarted worker is.
type proc struct {
	s     *Sim
	id    int
	gen   int
	up    bool
	owner string
	clock *simClock
	rt    *simRT     // this generation's runtime
	host  *host.Host // this generation's host (host mode), once started
	// outbox holds the commands the process's clients are to retry (host
	// mode): a client's durable outbox, it outlives the generation.
	outbox   []*simCmd
	inflight []*simCmd         // commands this generation's submitters are sending
	w        *scheduler.Worker // this generation's worker, the shipped one
	k        *keeper.Keeper    // its keeper
	ctx      context.Context
	stop     context.CancelFunc

	threads     []*thread
	held        map[int64]bool // runs this generation claimed and has not yet finished (runStore)
	pausedUntil time.Duration  // unused by faults today; the loop honours it
	partUntil   time.Duration  // partitioned from the store until then
	lastFault   time.Duration  // last call that failed, was lost or slow
}

func (p *proc) partitioned() bool { return p.partUntil > p.s.loop.now }

// noteFault records that this process could not count on the store just
// now: "no live holder is reclaimed" is only claimed for holders that had
// none for a whole term.
func (p *proc) noteFault() { p.lastFault = max(p.lastFault, p.s.loop.now) }

// pause stops every thread of p for a while (SIGSTOP, a long GC, a
// descheduled VM). Half the pauses are aimed at the edge that matters: they
// end just after the earliest lease p holds expires on the store clock,
// within the reclaimer's poll, when the lease is expired but not yet
// reclaimed — where a renewal must be refused and no effect may start.
func (p *proc) pause(why string) {
	s, l := p.s, p.s.loop
	d := time.Duration(l.rng.Float64() * float64(s.knobs.PauseMax))
	if l.rng.IntN(2) == 0 {
		now := s.storeClock.Now()
		// The minimum over a map: written so that the visiting order (Go
		// randomizes it) cannot change the result, or the seed would not
		// replay — a negative "left" once doubled as "none yet".
		var earliest time.Duration
		found := false
		for id := range p.held {
			if r := s.oracle.row(id); r.State == runs.StateRunning && r.Owner == p.owner {
				if left := r.ExpiresAt.Sub(now); !found || left < earliest {
					earliest, found = left, true
				}
			}
		}
		if found {
			d = max(earliest, 0) + time.Duration(l.rng.Int64N(int64(s.knobs.Timing.Poll+s.knobs.ReclaimLagMax)+1))
		}
	}
	s.pauses++
	l.logf("%s paused for %v %s", p.owner, d.Round(time.Millisecond), why)
	p.pausedUntil = max(p.pausedUntil, l.now+d)
	p.lastFault = max(p.lastFault, p.pausedUntil)
}

// start begins a new generation: a fresh owner and a new shipped
// scheduler.Worker — with its completer, keeper and event committer — on
// this generation's simRT, the process's clock and a store seen through
// the network (runStore). Its fetch loop, heartbeats, drain, self-stop
// timer, gate, completions and event group commit are the shipped code;
// what the simulator supplies is the handler (the user's program) and the
// world holder's program.
func (p *proc) start() {
	s := p.s
	p.gen++
	p.up = true
	p.owner = fmt.Sprintf("w%d.%d", p.id, p.gen)
	p.held = map[int64]bool{}
	p.threads = nil
	p.lastFault = s.loop.now
	p.ctx, p.stop = context.WithCancel(context.Background())
	r := &simRT{l: s.loop, p: p, gen: p.gen}
	s.hs.countHost(p.host) // the last generation's host
	p.rt, p.host = r, nil
	log := slog.New(slog.DiscardHandler)
	store := &runStore{p: p}
	events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Clock: p.clock, Runtime: r, Logger: log})
	w, err := scheduler.NewWorker(store, events, scheduler.WorkerConfig{Owner: p.owner, Queues: map[string]int{"q": s.knobs.Runs},
		Timing: s.knobs.Timing, Mode: s.knobs.Mode, ClockCheck: -1, FetchInterval: s.fetchEvery,
		Backoff: runs.Backoff{Base: s.knobs.Timing.Poll, Max: 4 * s.knobs.Timing.Poll},
		Clock:   p.clock, Runtime: r, Rand: s.loop.rng.Float64, Logger: log})
	if err != nil {
		panic(err) // the knobs are validated
	}
	w.Handle("q", p.handle)
	p.w, p.k = w, w.Keeper()
	s.loop.logf("%s starts", p.owner)
	if err := events.Start(p.ctx); err != nil {
		panic(err)
	}
	if err := w.Start(p.ctx); err != nil {
		panic(err)
	}
	if s.knobs.Host {
		s.loop.spawn(p, p.owner+" host", p.hostMain)
		return
	}
	s.loop.spawn(p, p.owner+" world", p.worldLoop)
}

// crash ends the generation at once: no more steps, no goodbye writes.
// Requests already in flight may still land at the store.
func (p *proc) crash() {
	l := p.s.loop
	l.logf("%s CRASH (held %d runs)", p.owner, len(p.held))
	p.s.oracle.crashed(p)
	p.up = false
	p.stop()
	for _, c := range p.inflight { // the client's outbox keeps what it had not been answered
		if !c.acked {
			c.hint = -1
			p.outbox = append(p.outbox, c)
		}
	}
	p.inflight = nil
	for _, t := range p.threads {
		if !t.done && t.parked {
			seq := t.waitSeq
			l.at(l.now, func() { l.resume(t, seq) })
		}
	}
}

// handle is the handler the simulated workers run — the user's program:
// Effects effects, each followed by Events events and a Step. Each effect
// goes through the shipped Run.Effect (check, gate, intent, gate, fn,
// commit); fn is the downstream call, which the oracle and the witness
// watch, and takes a seeded time. An uncertain effect is reconciled with
// the witness and resolved, then asked again, as the docs tell a user.
func (p *proc) handle(ctx context.Context, r *scheduler.Run) error {
	s := p.s
	tm := s.knobs.Timing
	var seq int64
	for i := range s.knobs.Effects {
		key := fmt.Sprintf("e%d", i)
		maxDur := min(tm.MaxEffect(), time.Duration(float64(tm.MaxEffect())*0.3*s.loop.rng.Float64())+time.Millisecond)
		for {
			_, err := r.Effect(ctx, key, maxDur, func(context.Context, scheduler.EffectToken) ([]byte, error) {
				s.oracle.invoke(p, r.ID, key, r.Fence)
				s.loop.cur.sleep(time.Duration(s.loop.rng.Int64N(int64(maxDur) + 1)))
				return nil, nil
			})
			var ue *scheduler.UncertainEffectError
			if errors.As(err, &ue) {
				// Reconcile with the downstream system, then resolve.
				happened := s.witness.reconcile(r.ID, key, r.Fence)
				s.oracle.reportUncertain(r.ID, key)
				s.loop.logf("%s run %d fence %d: effect %s uncertain (happened: %v)", p.owner, r.ID, r.Fence, key, happened)
				if err := r.ResolveEffect(ctx, key, happened, nil); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
			break
		}
		if s.knobs.Events == 0 {
			continue
		}
		batch := make([]driver.RunEventInsert, s.knobs.Events)
		for j := range batch {
			seq++
			batch[j] = driver.RunEventInsert{RunID: r.ID, Fence: r.Fence, Seq: seq, Kind: "step", Payload: []byte(fmt.Sprintf(`{"effect":%d,"n":%d}`, i, j))}
			if err := r.Emit(ctx, "step", batch[j].Payload); err != nil {
				return err
			}
		}
		if err := r.Step(ctx); err != nil {
			return err
		}
		s.oracle.eventsAcked(batch) // Step returned: durable
	}
	return nil
}
