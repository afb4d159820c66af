package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/journal"
)

// payoutEffector is the host's Effector in host mode: the downstream bank,
// outside the ledger. The witness's record (hostState.payouts) is the
// simulation's, not the process's, so it outlives crashes; each invocation
// is checked and recorded there as it starts.
type payoutEffector struct{ p *proc }

var (
	_ host.Effector   = (*payoutEffector)(nil)
	_ host.Reconciler = (*payoutEffector)(nil)
)

// errFenceToken: the witness refused a payout whose fence token is below
// one it has seen (or been told of by a Reconcile) for the command.
var errFenceToken = fmt.Errorf("sim witness: fence token below one already seen")

func (e *payoutEffector) Invoke(ctx context.Context, c host.EffectCall) (json.RawMessage, error) {
	p, s := e.p, e.p.s
	l := s.loop
	// The call's deadline (simRT.WithTimeout): a call that is due already
	// is not made, as a downstream client with a spent deadline makes none.
	left := time.Duration(programs.PayoutMaxDuration)
	if dl, ok := ctx.Value(deadlineKey{}).(time.Duration); ok {
		left = min(left, dl-l.now)
	}
	if left <= 0 || ctx.Err() != nil {
		return nil, context.DeadlineExceeded
	}
	if !s.oracle.payoutInvoked(p, c) {
		return nil, errFenceToken
	}
	if s.faulty() && l.rng.IntN(5) == 0 {
		p.pauseMidTurn(c.Command)
	}
	l.cur.sleep(time.Duration(l.rng.Int64N(int64(left/2) + 1)))
	return json.RawMessage(`{"paid":true}`), nil
}

// Reconcile answers whether the command's payout was accepted, and raises
// the lowest token the witness accepts for it to the asker's, so a paused
// older holder's late call is refused.
func (e *payoutEffector) Reconcile(_ context.Context, c host.EffectCall) (bool, json.RawMessage, error) {
	s := e.p.s
	r := s.hs.payout(c.Command)
	r.floor = max(r.floor, c.Epoch)
	s.hs.asked++
	s.loop.logf("%s reconciles payout of %s under epoch %d: happened %v", e.p.owner, c.Command, c.Epoch, r.accepted > 0)
	if r.accepted > 0 {
		return true, json.RawMessage(`{"paid":true}`), nil
	}
	return false, nil, nil
}

func (hs *hostState) payout(key string) *payoutRec {
	r := hs.payouts[key]
	if r == nil {
		r = &payoutRec{}
		hs.payouts[key] = r
	}
	return r
}

// payoutInvoked checks a payout as it starts — the invoker holds the
// lease under the call's epoch, live on the store clock; the witness has
// not accepted the command's payout before — and reports whether the
// witness accepts its fence token.
func (o *oracle) payoutInvoked(p *proc, c host.EffectCall) bool {
	s := o.s
	w, err := s.store.WorldGet(context.Background(), &driver.WorldGetParams{World: worldID})
	if err != nil {
		panic(err)
	}
	now := journal.StoreNow(w.State, s.storeClock.Now())
	if w.Epoch != c.Epoch || w.Holder != nodeName(p.id) || w.Expired(now) {
		o.fail(InvEffectLive, "%s invokes the payout of %s under epoch %d while the store has epoch %d held by %q, expiring in %v",
			p.owner, c.Command, c.Epoch, w.Epoch, w.Holder, w.ExpiresAt.Sub(now))
	}
	r := s.hs.payout(c.Command)
	r.invoked++
	s.hs.invoked++
	if c.Epoch < max(r.highest, r.floor) {
		s.hs.refused++
		s.loop.logf("%s payout of %s under epoch %d refused by the witness (seen %d)", p.owner, c.Command, c.Epoch, max(r.highest, r.floor))
		return false
	}
	r.highest = c.Epoch
	r.accepted++
	s.loop.logf("%s pays out %s under epoch %d (attempt %d)", p.owner, c.Command, c.Epoch, c.Attempt)
	if r.accepted > 1 {
		o.fail(InvPayoutOnce, "the payout of command %s accepted %d times (this one by %s under epoch %d, attempt %d)",
			c.Command, r.accepted, p.owner, c.Epoch, c.Attempt)
	}
	return true
}

// hostTurn is a host.turn entry's payload, as the host writes it.
type hostTurn struct {
	Events  []host.Event         `json:"e"`
	Reply   json.RawMessage      `json:"r"`
	Effects []host.EffectOutcome `json:"x"`
}

// finalHost checks the host mode's invariants on the journal at the end:
// each acknowledged command once, as a turn, where it was acknowledged;
// the bank folded from the turns; each payout made exactly once.
func (o *oracle) finalHost(entries []journal.Entry) {
	s := o.s
	at := map[string][]int64{}
	bank := programs.Bank{}.New()
	var want int64
	for i := range entries {
		e := &entries[i]
		if len(e.Signature) > 0 {
			s.hs.signed++
		}
		if e.Kind != host.TurnKind {
			continue
		}
		at[e.Key] = append(at[e.Key], e.Position)
		var t hostTurn
		if err := json.Unmarshal(e.Payload, &t); err != nil {
			o.fail(InvLedger, "turn at %d: %v", e.Position, err)
			continue
		}
		for _, ev := range t.Events {
			if err := bank.Apply(ev); err != nil {
				o.fail(InvLedger, "the bank cannot fold the turn of %s at %d: %v", e.Key, e.Position, err)
			}
		}
		c := s.hs.byKey[e.Key]
		if c == nil {
			o.fail(InvCommands, "a turn at %d for key %q no client sent", e.Position, e.Key)
			continue
		}
		var rep programs.BankReply
		if err := json.Unmarshal(t.Reply, &rep); err != nil || !rep.OK {
			continue
		}
		if !c.payout {
			want += c.amount
			continue
		}
		want -= c.amount
		if len(t.Effects) == 1 && t.Effects[0].Error == "" {
			if n := s.hs.payout(c.key).accepted; n != 1 {
				o.fail(InvPayoutOnce, "the turn of %s at %d records its payout made, and the witness accepted it %d times", c.key, e.Position, n)
			}
		}
	}
	if got := bank.(*programs.BankState).Total; got != want {
		o.fail(InvLedger, "the bank folded from the journal holds %d; its turns accepted deposits − payouts = %d", got, want)
	}
	for k, ps := range at {
		if len(ps) > 1 {
			o.fail(InvCommands, "command %s is in the journal %d times, at %v", k, len(ps), ps)
		}
	}
	for _, c := range s.hs.cmds {
		if !c.acked {
			continue
		}
		if ps := at[c.key]; len(ps) != 1 || ps[0] != c.ackPos {
			o.fail(InvCommands, "acknowledged command %s (at %d) is in the journal as turns at %v", c.key, c.ackPos, ps)
		}
	}
}

// pauseMidTurn is the mid-turn expiry of SPEC §4's walkthroughs, aimed:
// the process stops just after its payout went out — the intent is
// journaled, the turn is not — until its world lease has expired and the
// sweep has had a poll to grant it home. The host must then find the
// payout uncertain wherever the command is retried, and reconcile it
// rather than pay again; the paused holder's turn append is fenced.
func (p *proc) pauseMidTurn(cmd string) {
	s, l := p.s, p.s.loop
	tm := s.knobs.Timing
	w, err := s.store.WorldGet(context.Background(), &driver.WorldGetParams{World: worldID})
	if err != nil {
		panic(err)
	}
	now := journal.StoreNow(w.State, s.storeClock.Now())
	d := max(w.ExpiresAt.Sub(now), 0) + tm.Poll + time.Duration(l.rng.Int64N(int64(tm.Poll+tm.Skew)+1))
	s.pauses++
	l.logf("%s paused for %v mid-turn, just after paying out %s", p.owner, d.Round(time.Millisecond), cmd)
	p.pausedUntil = max(p.pausedUntil, l.now+d)
	p.lastFault = max(p.lastFault, p.pausedUntil)
}
