package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// witness is the downstream system, outside the ledger: it records every
// invocation with its fence token (the epoch) and refuses a token lower
// than one it has seen for the idempotency key.
type witness struct {
	mu       sync.Mutex
	calls    map[string][]int64
	fence    map[string]int64 // the highest epoch a reconcile asked under, by idempotency key
	onInvoke func(c host.EffectCall)
}

func newWitness() *witness { return &witness{calls: map[string][]int64{}, fence: map[string]int64{}} }

func (w *witness) Invoke(_ context.Context, c host.EffectCall) (json.RawMessage, error) {
	w.mu.Lock()
	for _, e := range append(w.calls[c.IdempotencyKey], w.fence[c.IdempotencyKey]) {
		if c.Epoch < e {
			w.mu.Unlock()
			return nil, fmt.Errorf("fence token %d is below %d", c.Epoch, e)
		}
	}
	w.calls[c.IdempotencyKey] = append(w.calls[c.IdempotencyKey], c.Epoch)
	hook := w.onInvoke
	w.mu.Unlock()
	if hook != nil {
		hook(c)
	}
	return json.RawMessage(`{"paid":true}`), nil
}

func (w *witness) Reconcile(_ context.Context, c host.EffectCall) (bool, json.RawMessage, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fence[c.IdempotencyKey] = max(w.fence[c.IdempotencyKey], c.Epoch)
	if len(w.calls[c.IdempotencyKey]) > 0 {
		return true, json.RawMessage(`{"paid":true}`), nil
	}
	return false, nil, nil
}

func (w *witness) total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, cs := range w.calls {
		n += len(cs)
	}
	return n
}

// invokeOnly hides the witness's Reconcile: a host with it can only report
// an uncertain effect.
type invokeOnly struct{ w *witness }

func (o invokeOnly) Invoke(ctx context.Context, c host.EffectCall) (json.RawMessage, error) {
	return o.w.Invoke(ctx, c)
}

func payout(key string, n int) host.Command {
	return host.Command{Key: key, Payload: json.RawMessage(fmt.Sprintf(`{"op":"payout","account":"a","amount":%d,"to":"elsewhere"}`, n))}
}

func withEffector(e host.Effector) func(*host.Config) { return func(c *host.Config) { c.Effector = e } }

// TestEffectsRunOnceThroughRetriesAndAHandoff: a payout's effect is
// invoked once; retries — on the same holder and on the next one after a
// handoff — get the first reply and its effect's outcome, never a second
// invocation.
func TestEffectsRunOnceThroughRetriesAndAHandoff(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		w := newWitness()
		home := newHost(t, d, "home-1", programs.Bank{}, withEffector(w))
		spill := newHost(t, d, "spill-1", programs.Bank{}, withEffector(w))
		require.NoError(t, home.Create(ctx, "acct"))
		r := host.NewRouter(d, home, spill)
		_, err := r.Submit(ctx, "acct", deposit("a", 10))
		require.NoError(t, err)
		rep, err := r.Submit(ctx, "acct", payout("p1", 3))
		require.NoError(t, err)
		require.Equal(t, []host.EffectOutcome{{Key: "payout", Result: json.RawMessage(`{"paid":true}`)}}, rep.Effects)
		require.Equal(t, 1, w.total())
		again, err := r.Submit(ctx, "acct", payout("p1", 3))
		require.NoError(t, err)
		require.True(t, again.Duplicate)
		require.Equal(t, rep.Effects, again.Effects, "a retry gets the first outcome")
		require.NoError(t, r.Handoff(ctx, "acct", "home-1", "spill-1"))
		again, err = r.Submit(ctx, "acct", payout("p1", 3))
		require.NoError(t, err)
		require.True(t, again.Duplicate)
		require.Equal(t, rep.Position, again.Position)
		require.Equal(t, 1, w.total(), "no second invocation on the next holder")
		_, err = r.Submit(ctx, "acct", payout("p2", 2))
		require.NoError(t, err)
		require.Equal(t, 2, w.total())
		es := journalOf(t, d, "acct")
		auditOK(t, es)
		intents := 0
		for _, e := range es {
			if e.Kind == host.EffectKind {
				intents++
			}
		}
		require.Equal(t, 2, intents)

		// A program's effect on a host with no Effector is refused, typed.
		bare := newHost(t, d, "bare-1", programs.Bank{})
		require.NoError(t, bare.Create(ctx, "bare"))
		_, err = bare.Submit(ctx, "bare", deposit("a", 10))
		require.NoError(t, err)
		_, err = bare.Submit(ctx, "bare", payout("p3", 1))
		var ce *host.CommandError
		require.ErrorAs(t, err, &ce)
		require.ErrorIs(t, err, lease.ErrInvalid)
	})
}

// TestAnEffectStartedUnderALostLeaseIsNeverInvokedAgain is walkthrough (c)
// in one process: the lease is revoked while the payout's effect runs, so
// its turn is refused; the next holder finds the intent with no turn.
// Without a reconciler it answers uncertain; with one it asks the witness,
// journals the answer, and applies the command — once, and the witness
// saw one invocation.
func TestAnEffectStartedUnderALostLeaseIsNeverInvokedAgain(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		w := newWitness()
		home := newHost(t, d, "home-1", programs.Bank{}, withEffector(w))
		blind := newHost(t, d, "blind-1", programs.Bank{}, withEffector(invokeOnly{w}))
		asks := newHost(t, d, "asks-1", programs.Bank{}, withEffector(w))
		require.NoError(t, home.Create(ctx, "acct"))
		_, err := home.Submit(ctx, "acct", deposit("a", 10))
		require.NoError(t, err)
		require.NoError(t, blind.Prepare(ctx, "acct"))
		require.NoError(t, asks.Prepare(ctx, "acct"))

		var once sync.Once
		w.onInvoke = func(host.EffectCall) {
			once.Do(func() { // the operator revokes mid-turn: the effect has run, the turn has not
				_, err := d.LeaseChange(ctx, &driver.LeaseChangeParams{World: "acct", Op: "revoke",
					Plan: func(cur *driver.World, now time.Time) (journal.Plan, error) {
						return journal.PlanRevoke(cur.State, now, cur.Epoch, "mid-turn")
					}})
				require.NoError(t, err)
			})
		}
		_, err = home.Submit(ctx, "acct", payout("p1", 3))
		var nh *host.NotHolderError
		require.ErrorAs(t, err, &nh, "the turn's append is refused: not acknowledged")
		require.Equal(t, 1, w.total())

		grant := func(to string) {
			_, err := d.LeaseChange(ctx, &driver.LeaseChangeParams{World: "acct", Op: "grant",
				Plan: func(cur *driver.World, now time.Time) (journal.Plan, error) {
					return journal.PlanGrant(cur.State, now, to, cur.Epoch, 30*time.Second)
				}})
			require.NoError(t, err)
		}
		grant("blind-1")
		require.NoError(t, blind.Acquire(ctx, "acct"))
		_, err = blind.Submit(ctx, "acct", payout("p1", 3))
		var ue *host.UncertainEffectError
		require.ErrorAs(t, err, &ue)
		require.ErrorIs(t, err, lease.ErrUncertain)
		require.Equal(t, "payout", ue.Key)
		require.Equal(t, 1, w.total(), "uncertain: never invoked again")
		_, err = serve(t, blind).Submit(ctx, "acct", payout("p1", 3))
		var remote *host.UncertainEffectError
		require.ErrorAs(t, err, &remote, "the same typed answer over the host's HTTP API")
		require.Equal(t, *ue, *remote)
		require.Equal(t, 1, w.total())

		r := host.NewRouter(d, home, blind, asks)
		require.NoError(t, r.Handoff(ctx, "acct", "blind-1", "asks-1"))
		rep, err := r.Submit(ctx, "acct", payout("p1", 3))
		require.NoError(t, err)
		require.False(t, rep.Duplicate, "applied now, once")
		require.Equal(t, []host.EffectOutcome{{Key: "payout", Result: json.RawMessage(`{"paid":true}`)}}, rep.Effects)
		require.Equal(t, 1, w.total(), "the reconciler's answer, not a second invocation")
		bal, err := r.Submit(ctx, "acct", host.Command{Key: "bal", Payload: json.RawMessage(`{"op":"balance","account":"a"}`)})
		require.NoError(t, err)
		require.JSONEq(t, `{"ok":true,"balance":7}`, string(bal.Payload), "withdrawn once")

		es := journalOf(t, d, "acct")
		auditOK(t, es)
		kinds := []journal.Kind{}
		for _, e := range es {
			if e.Kind == host.EffectKind || e.Kind == host.EffectResolvedKind || (e.Kind == host.TurnKind && e.Key == "p1") {
				kinds = append(kinds, e.Kind)
			}
		}
		require.Equal(t, []journal.Kind{host.EffectKind, host.EffectResolvedKind, host.TurnKind}, kinds)
		require.Equal(t, 1, turnKeys(es)["p1"])
	})
}
