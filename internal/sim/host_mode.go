package sim

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/lease"
)

// Host mode (Knobs.Host, a share of the seeds): each process generation
// runs the shipped host.Host — its world loop, turns, mirror, keeper,
// signing and effect ledger — with programs.Bank, instead of the bare
// world.Holder program of world.go. What the simulator owns here is the
// clients and the operator:
//
//   - submitters (Knobs.Submitters per process) send bank deposits and
//     payouts, each under a unique idempotency key, through their own
//     process's host; a command answered with a retryable error (not the
//     holder, an unknown outcome, an uncertain effect, no runway, closed,
//     a lost call) goes back to the process's outbox — which outlives the
//     generation, as a client's durable outbox would — and is retried
//     later with the same key, at the node the error names if it names
//     one (a call to another process's host, hostRPC); now and then an
//     acknowledged command is sent again, which must be answered with
//     its first position;
//   - each process's operator thread hands a world it holds to another
//     process as host.Router.Handoff does: the receiver Prepares, the
//     sender hands off, the receiver Acquires;
//   - the payout witness (payoutEffector), outside the ledger, is the
//     downstream bank: it records each payout with its fence token (the
//     epoch) and refuses lower ones, and answers the host's Reconcile
//     from what it recorded.
//
// The crash, pause, partition and clock faults and the expiry sweep (which
// grants home, node-0) are the seed's, as in the rest of the simulation.

// hostShare: one seed in hostShare runs its processes' worlds in host mode.
const hostShare = 4

// The host mode's invariants.
const (
	// InvCommands: every acknowledged command key is in the journal
	// exactly once, as a host.turn entry, at the position acknowledged
	// (a duplicate answer included).
	InvCommands = "commands"
	// InvLedger: the bank folded from the journal never goes negative and
	// its total is the deposits minus the payouts its turns accepted.
	InvLedger = "ledger"
	// InvPayoutOnce: the witness accepts a command's payout at most once
	// (the host reconciles an uncertain one), and exactly once for a
	// payout the journal records as made.
	InvPayoutOnce = "payout-once"
	// InvEffectLive: a payout is invoked only while its invoker holds the
	// world's lease under the call's epoch, unexpired on the store clock.
	InvEffectLive = "effect-live"
	// InvSnapshot: every world snapshot a host's empty mirror finds
	// verifies against the journal and restores (host/snapshot.go): the
	// journal never changes, so one that does not is a host bug — a
	// snapshot taken from a state that is not the journal's fold.
	InvSnapshot = "snapshot"
)

// simCmd is one client command, with what the client was told.
type simCmd struct {
	key    string
	payout bool
	amount int64
	body   []byte
	hint   int // the process to submit to next (-1: the submitter's own)
	acked  bool
	ackPos int64
}

// hostSnapshotEvery is the hosts' snapshot interval: a few turns, so a
// run's short journal is snapshotted several times and every restart,
// spill and rebuild restores one and replays a tail (host/snapshot.go).
const hostSnapshotEvery = 4

// payoutRec is the witness's record of one command's payout.
type payoutRec struct {
	invoked, accepted int
	highest, floor    int64
}

// hostState is the host mode's share of a simulation.
type hostState struct {
	cmds     []*simCmd
	byKey    map[string]*simCmd
	payouts  map[string]*payoutRec
	acked    int // commands acknowledged (each once)
	resent   int // acknowledged commands sent again and answered as duplicates
	invoked  int // payout invocations the witness saw
	refused  int // of them refused for a lower fence token
	asked    int // uncertain payouts the hosts reconciled with the witness
	signed   int // journal entries that carry a holder's signature (the audit verified them)
	handoffs int // handoffs the store applied
	snapsPut int // world snapshots the hosts stored
	snapsGot int // world snapshots the hosts' empty mirrors found (and checked before restoring)
	// snapsRestored, snapsIgnored: the hosts' own counts (host.Stats),
	// summed over every generation's host.
	snapsRestored, snapsIgnored int64
	bandMoves                   int // handoffs the band made, each after its host.band entry
}

// countHost adds a host generation's snapshot counts (nil: none).
func (hs *hostState) countHost(h *host.Host) {
	if h == nil {
		return
	}
	st := h.Stats()
	hs.snapsRestored += st.SnapshotsRestored
	hs.snapsIgnored += st.SnapshotsIgnored
}

func (s *Sim) hostDone() bool {
	if !s.knobs.Host {
		return true
	}
	if len(s.hs.cmds) < s.knobs.Commands {
		return false
	}
	for _, c := range s.hs.cmds {
		if !c.acked {
			return false
		}
	}
	return true
}

// hostMain is the operator thread of one process generation in host
// mode: it starts the host (registering a key drawn from the seed), makes
// the host's first look at the world, starts the submitters, then now and
// then hands the world on.
func (p *proc) hostMain(t *thread) {
	s := p.s
	k, tm := s.knobs, s.knobs.Timing
	var seed [ed25519.SeedSize]byte
	for i := range seed {
		seed[i] = byte(s.loop.rng.IntN(256))
	}
	cfg := host.Config{Store: &hostStore{p: p}, Node: nodeName(p.id), Program: programs.Bank{}, Clock: p.clock, Timing: tm,
		Effector: &payoutEffector{p: p}, Key: ed25519.NewKeyFromSeed(seed[:]), Logger: slog.New(slog.DiscardHandler), Runtime: p.rt,
		SnapshotEvery: hostSnapshotEvery}
	if k.Band {
		cfg.Band = p.band()
	}
	for {
		h, err := host.New(cfg)
		if err == nil {
			p.host = h
			break
		}
		t.sleep(tm.Renew / 4)
	}
	for { // the first look, before any grant it could be handed
		ctx, cancel := p.rt.WithTimeout(p.ctx, 2*k.CallTimeout)
		err := p.host.Prepare(ctx, worldID)
		cancel()
		if err == nil {
			break
		}
		t.sleep(tm.Renew / 4)
	}
	s.loop.logf("%s host up", p.owner)
	for i := range k.Submitters {
		s.loop.spawn(p, fmt.Sprintf("%s submitter %d", p.owner, i), p.submitter)
	}
	for {
		t.sleep(tm.Renew/2 + time.Duration(s.loop.rng.Int64N(int64(tm.Renew)+1)))
		if k.Band || len(s.procs) < 2 || !slices.Contains(p.host.Held(), worldID) || s.loop.rng.IntN(3) != 0 {
			continue
		}
		q := s.procs[(p.id+1+s.loop.rng.IntN(len(s.procs)-1))%len(s.procs)]
		to := nodeName(q.id)
		if err := p.hostRPC(t, q, "prepare", 2*k.CallTimeout, func(ctx context.Context, h *host.Host) error {
			return h.Prepare(ctx, worldID)
		}); err != nil {
			continue
		}
		ctx, cancel := p.rt.WithTimeout(p.ctx, 2*k.CallTimeout)
		err := p.host.Handoff(ctx, worldID, to)
		cancel()
		if err != nil {
			continue
		}
		_ = p.hostRPC(t, q, "acquire", 3*k.CallTimeout, func(ctx context.Context, h *host.Host) error {
			return h.Acquire(ctx, worldID)
		})
	}
}

// submitTimeout bounds one submission: an acquire (a look, a replay, a
// renewal), a turn's replay, reconcile, gate renewal, intent and append.
func (k Knobs) submitTimeout() time.Duration { return 6 * k.CallTimeout }

// submitter is one client thread of a process: it issues the process's
// share of new commands during the fault phase and retries its outbox.
func (p *proc) submitter(t *thread) {
	s := p.s
	k, l := s.knobs, s.loop
	gap := max(k.FaultPhase*time.Duration(len(s.procs)*k.Submitters)/time.Duration(max(k.Commands, 1)), time.Second)
	for {
		var c *simCmd
		switch {
		case len(p.outbox) > 0:
			t.sleep(time.Duration(l.rng.Int64N(int64(k.Timing.Renew/4) + 1)))
			if len(p.outbox) == 0 {
				continue
			}
			c, p.outbox = p.outbox[0], p.outbox[1:]
		default:
			t.sleep(time.Duration(l.rng.Int64N(int64(gap) + 1)))
			if len(p.outbox) > 0 {
				continue
			}
			if n := len(s.hs.cmds); n > 0 && l.rng.IntN(6) == 0 {
				if a := s.hs.cmds[l.rng.IntN(n)]; a.acked {
					c = a // a client resends a command it has an answer for
				}
			}
			if c == nil {
				if len(s.hs.cmds) >= k.Commands {
					continue
				}
				c = s.newCmd()
			}
		}
		target := p
		if c.hint >= 0 {
			target = s.procs[c.hint]
		}
		p.inflight = append(p.inflight, c)
		rep, err := p.submitTo(t, target, c)
		p.inflight = slices.DeleteFunc(p.inflight, func(x *simCmd) bool { return x == c })
		p.settle(c, rep, err)
	}
}

// newCmd draws the next command: a deposit, or a payout (which may find
// too little in the account, and is then answered, not paid).
func (s *Sim) newCmd() *simCmd {
	l := s.loop
	n := len(s.hs.cmds)
	c := &simCmd{key: fmt.Sprintf("c%d", n), amount: 1 + l.rng.Int64N(10), hint: -1}
	acct := fmt.Sprintf("a%d", l.rng.IntN(2))
	if l.rng.IntN(5) < 2 {
		c.payout = true
		c.body = fmt.Appendf(nil, `{"op":"payout","account":%q,"amount":%d,"to":"elsewhere"}`, acct, c.amount)
	} else {
		c.body = fmt.Appendf(nil, `{"op":"deposit","account":%q,"amount":%d}`, acct, c.amount)
	}
	s.hs.cmds = append(s.hs.cmds, c)
	s.hs.byKey[c.key] = c
	return c
}

// submitTo submits c through q's host: p's own directly, another's over
// the network (hostRPC).
func (p *proc) submitTo(t *thread, q *proc, c *simCmd) (host.Reply, error) {
	cmd := host.Command{Key: c.key, Payload: c.body}
	to := p.s.knobs.submitTimeout()
	if q == p {
		ctx, cancel := p.rt.WithTimeout(p.ctx, to)
		defer cancel()
		return p.host.Submit(ctx, worldID, cmd)
	}
	var rep host.Reply
	err := p.hostRPC(t, q, "submit "+c.key, to, func(ctx context.Context, h *host.Host) error {
		r, err := h.Submit(ctx, worldID, cmd)
		rep = r
		return err
	})
	return rep, err
}

// settle takes a submission's answer: an acknowledgement is recorded and
// checked against an earlier one; a retryable error puts the command back
// in the outbox, aimed at the node the error names.
func (p *proc) settle(c *simCmd, rep host.Reply, err error) {
	s := p.s
	if err == nil {
		if c.acked {
			if rep.Position != c.ackPos || !rep.Duplicate {
				s.oracle.fail(InvCommands, "command %s acknowledged at position %d, then answered at %d (duplicate %v)", c.key, c.ackPos, rep.Position, rep.Duplicate)
			}
			s.hs.resent++
			return
		}
		c.acked, c.ackPos = true, rep.Position
		s.hs.acked++
		s.loop.logf("%s: command %s acknowledged at %d", p.owner, c.key, rep.Position)
		return
	}
	var kr *host.KeyReusedError
	if errors.As(err, &kr) {
		s.oracle.fail(InvCommands, "command %s retried with its own payload answered as a reused key: %v", c.key, err)
		return
	}
	if errors.Is(err, lease.ErrInvalid) {
		s.loop.logf("%s: command %s refused: %v", p.owner, c.key, err)
		return
	}
	c.hint = -1
	var nh *host.NotHolderError
	if errors.As(err, &nh) && nh.Holder != "" {
		for _, q := range s.procs {
			if nodeName(q.id) == nh.Holder {
				c.hint = q.id
			}
		}
	}
	s.loop.logf("%s: command %s to retry (next at %d): %v", p.owner, c.key, c.hint, err)
	if c.acked { // a resend that failed: the client has its answer already
		return
	}
	p.outbox = append(p.outbox, c)
}

// hostRPC runs fn on q's host, as a call over the network from thread t
// of p: the request and the reply each take a latency and may be lost
// (also to a partition of either side); fn runs on a new thread of q's
// generation under timeout, and dies with it. A call that is not
// answered within timeout and the round trip returns errTimeout.
func (p *proc) hostRPC(t *thread, q *proc, name string, timeout time.Duration, fn func(ctx context.Context, h *host.Host) error) error {
	s, l, k := p.s, p.s.loop, p.s.knobs
	t.check()
	faulty := s.faulty()
	lost := p.partitioned() || (faulty && l.rng.Float64() < k.LossRate)
	reqLat, respLat := k.LatencyMin, k.LatencyMin
	if faulty {
		reqLat, respLat = k.latency(l.rng), k.latency(l.rng)
	}
	seq := t.prepare()
	var res error
	replied := false
	if !lost {
		l.at(l.now+reqLat, func() {
			if !q.up || q.host == nil || q.partitioned() {
				return
			}
			h := q.host
			l.spawn(q, q.owner+" "+name+" for "+p.owner, func(*thread) {
				ctx, cancel := q.rt.WithTimeout(q.ctx, timeout)
				err := fn(ctx, h)
				cancel()
				l.at(l.now+respLat, func() {
					if p.partitioned() || q.partitioned() {
						return
					}
					if t.waitSeq == seq && t.parked {
						res, replied = err, true
					}
					l.resume(t, seq)
				})
			})
		})
	}
	l.at(l.now+timeout+2*k.CallTimeout, func() { l.resume(t, seq) })
	t.park()
	if !replied {
		return errTimeout
	}
	return res
}
