package worldfault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// spillUnderLoad starts a home and a spill host, creates world w on the
// home, starts 4 submitters and hands w to the spill node after 100
// acknowledgements; it returns once 100 more were acknowledged.
func spillUnderLoad(t *testing.T, s *scenario, w string) (home, spill *hostProc) {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	home, spill = s.startHost("home-1"), s.startHost("spill-1")
	require.NoError(t, home.remote.Create(ctx, w))
	r := s.route()
	s.submit(w, 4)
	s.awaitAcked(100)
	require.NoError(t, r.Handoff(ctx, w, "home-1", "spill-1"))
	s.awaitAcked(s.acked.Load() + 100)
	return home, spill
}

// lostLease finds, after the handoff to spill-1, the lease.revoked{expiry}
// and the lease.granted that follow, and the last write of spill-1's
// epoch that set its expiry (its last confirmed renewal, or the handoff).
func lostLease(t *testing.T, es []journal.Entry) (lastRenewal, revoked, granted journal.Entry, lastData time.Time) {
	for _, e := range es {
		switch {
		case (e.Kind == journal.KindRenewed || e.Kind == journal.KindHandedOff) && e.Holder == "spill-1":
			lastRenewal = e
		case e.Kind == host.TurnKind && e.Holder == "spill-1":
			lastData = e.StoreTime
		case e.Kind == journal.KindRevoked && revoked.Position == 0 && lastRenewal.Position != 0:
			revoked = e
		case e.Kind == journal.KindGranted && revoked.Position != 0 && granted.Position == 0:
			granted = e
		}
	}
	require.NotZero(t, revoked.Position, "the spill node's lease was revoked")
	var p journal.Revoked
	require.NoError(t, json.Unmarshal(revoked.Payload, &p))
	require.Equal(t, journal.ReasonExpiry, p.Reason)
	require.Equal(t, "spill-1", p.Holder)
	require.NotZero(t, granted.Position, "and the world granted again")
	require.Equal(t, "home-1", granted.Holder)
	require.Equal(t, revoked.Epoch+1, granted.Epoch)
	require.Equal(t, revoked.Position+1, granted.Position, "revoke and grant in one transaction")
	return lastRenewal, revoked, granted, lastData
}

// TestWalkthroughSpillNodeKilledHoldingTheLease is SPEC §4's first
// walkthrough: the spill node is SIGKILLed holding the lease; the sweep
// appends lease.revoked{expiry} and lease.granted{home, epoch+1} within
// T_lease + P + S of its last confirmed renewal; home resumes on the next
// submission; every acknowledged command is in the journal once.
func TestWalkthroughSpillNodeKilledHoldingTheLease(t *testing.T) {
	t.Parallel()
	s := newScenario(t)
	_, spill := spillUnderLoad(t, s, "w")
	spill.kill()
	killed := time.Now()
	n := s.acked.Load()
	s.awaitAcked(n + 100)
	resumed := time.Since(killed)
	s.stopSubmitters()

	es := s.checkJournal("w")
	last, revoked, granted, _ := lostLease(t, es)
	bound := timing.Lease + timing.Poll + timing.Skew
	took := revoked.StoreTime.Sub(last.StoreTime)
	require.LessOrEqual(t, took, bound, "swept within T_lease + P + S of the last confirmed renewal")
	t.Logf("spill node killed: revoked{expiry} at %d and granted{home-1, epoch %d} at %d, %s after its last confirmed renewal (bound %s); home acknowledged 100 more within %s of the kill",
		revoked.Position, granted.Epoch, granted.Position, took.Round(time.Millisecond), bound, resumed.Round(time.Millisecond))
}

// TestWalkthroughSpillNodePartitionedFromTheStore is the second: store
// and spill node partitioned while both alive. The node's appends are
// refused or never arrive; it stops itself (it writes nothing more than
// D_stop after its last confirmed renewal); home is granted after expiry;
// the audit proves one writer per position.
func TestWalkthroughSpillNodePartitionedFromTheStore(t *testing.T) {
	t.Parallel()
	s := newScenario(t)
	_, spill := spillUnderLoad(t, s, "w")
	spill.proxy.SetBlackhole(true)
	n := s.acked.Load()
	s.awaitAcked(n + 100)
	spill.proxy.SetBlackhole(false)
	s.stopSubmitters()

	es := s.checkJournal("w")
	last, revoked, granted, lastData := lostLease(t, es)
	require.LessOrEqual(t, lastData.Sub(last.StoreTime), timing.Stop, "no turn of the spill node's journaled past D_stop of its last renewal")
	require.True(t, lastData.Before(revoked.StoreTime))
	held, stats := spill.status(t)
	require.NotContains(t, held, "w", "the partitioned node let the world go")
	require.GreaterOrEqual(t, stats.SelfStops, int64(1))
	t.Logf("partitioned: spill's last turn %s after its last renewal (D_stop %s); revoked at %d, granted{home-1, epoch %d} at %d, %s after the last renewal; spill stats %+v",
		lastData.Sub(last.StoreTime).Round(time.Millisecond), timing.Stop, revoked.Position, granted.Epoch, granted.Position,
		revoked.StoreTime.Sub(last.StoreTime).Round(time.Millisecond), stats)
}

// TestWalkthroughMirrorLagsAtHandoff is the fourth: the new holder's
// mirror is far behind at the handoff; it replays before appending (the
// ledger balances on it), and an append made from a mirror behind the
// grant is refused by the store.
func TestWalkthroughMirrorLagsAtHandoff(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	s := newScenario(t)
	home, spill := s.startHost("home-1"), s.startHost("spill-1")
	require.NoError(t, home.remote.Create(ctx, "w"))
	s.route()
	require.NoError(t, spill.remote.Prepare(ctx, "w")) // the first look, with the mirror at the journal's start
	s.submit("w", 4)
	s.awaitAcked(300) // the spill node's mirror is now ≥ 300 turns behind
	require.NoError(t, home.remote.Handoff(ctx, "w", "spill-1"))
	head, err := s.store.WorldGet(ctx, &driver.WorldGetParams{World: "w"})
	require.NoError(t, err)
	require.Equal(t, "spill-1", head.State.Holder)

	// A write from a mirror behind the grant is refused, and journals nothing.
	outs, err := s.store.JournalAppend(ctx, &driver.JournalAppendParams{World: "w", Requests: []journal.AppendRequest{{
		Holder: "spill-1", Epoch: head.State.Epoch, SeenPosition: head.State.GrantedAt - 1, Kind: host.TurnKind, Key: "stale", Payload: []byte(`{}`)}}})
	require.NoError(t, err)
	outErr := outs[0].Err
	require.ErrorIs(t, outErr, lease.ErrSeenBehind)
	var re *journal.RefusedError
	require.True(t, errors.As(outErr, &re))
	// Nothing journaled for it: the submitters, routed to spill-1 by the
	// handoff's answer, may have made it acquire (and renew) meanwhile, so
	// the head may move — but never by an append.rejected.
	tail, err := s.store.JournalRead(ctx, &driver.JournalReadParams{World: "w", From: head.State.Position + 1, Limit: 10_000})
	require.NoError(t, err)
	for _, e := range tail {
		require.NotEqual(t, journal.KindRejected, e.Kind, "a seen-behind refusal journals nothing (position %d)", e.Position)
	}

	require.NoError(t, spill.remote.Acquire(ctx, "w"))
	s.awaitAcked(s.acked.Load() + 300)
	s.stopSubmitters()
	bal, err := s.router.Submit(ctx, "w", host.Command{Key: "balance", Payload: json.RawMessage(`{"op":"balance","account":"a2"}`)})
	require.NoError(t, err)
	es := s.checkJournal("w")
	var deposits, payouts int
	for _, e := range es {
		var k int
		if _, err := fmt.Sscanf(e.Key, "sub2-%d", &k); e.Kind == host.TurnKind && err == nil {
			if k%5 == 4 { // a payout (scenario.submit)
				payouts++
			} else {
				deposits++
			}
		}
	}
	var br struct{ Balance int }
	require.NoError(t, json.Unmarshal(bal.Payload, &br))
	require.Equal(t, deposits-payouts, br.Balance, "the spill node's state includes every turn home journaled before the handoff")
	t.Logf("mirror lag at handoff: granted at %d; account a2 balance %d = its %d journaled deposits − %d payouts",
		head.State.GrantedAt, br.Balance, deposits, payouts)
}

// TestWalkthroughLeaseExpiresMidTurn is the third: the spill node's
// connection stalls with a turn's append in flight for longer than the
// lease term. The append lands after the lease expired on the store clock
// and is refused (journaled as append.rejected at most once), or never
// commits; its commands are retried with their keys and applied by the new
// holder exactly once.
//
// Not shown yet: world turns' side effects through the epoch-fenced effect
// ledger (they do not exist yet); when they do, this test gains a witness
// that the turn's effects are not repeated.
func TestWalkthroughLeaseExpiresMidTurn(t *testing.T) {
	t.Parallel()
	s := newScenario(t)
	_, spill := spillUnderLoad(t, s, "w")
	head, err := s.store.WorldGet(context.Background(), &driver.WorldGetParams{World: "w"})
	require.NoError(t, err)
	// The store is cut off from the spill node while one of its payouts'
	// effect is being performed: the effect happened (the witness has it),
	// its intent is journaled, and the turn that would record it cannot
	// commit before the lease expires.
	var once sync.Once
	var caught host.EffectCall
	stalled := make(chan struct{})
	s.wit.onCall(func(c host.EffectCall) {
		if c.Epoch == head.State.Epoch {
			once.Do(func() {
				caught = c
				spill.proxy.Stall(timing.Lease + time.Second)
				close(stalled)
			})
		}
	})
	select {
	case <-stalled:
	case <-time.After(patience):
		t.Fatal("no payout reached the witness from the spill node")
	}
	n := s.acked.Load()
	s.awaitAcked(n + 100)
	spill.proxy.Stall(0)
	s.stopSubmitters()

	es := s.checkJournal("w")
	last, revoked, granted, lastData := lostLease(t, es)
	var rejected []journal.Entry
	for _, e := range es {
		if e.Kind == journal.KindRejected {
			rejected = append(rejected, e)
		}
	}
	require.LessOrEqual(t, len(rejected), 2, "at most one append.rejected per holder per epoch")
	require.True(t, lastData.Before(revoked.StoreTime), "no turn of the spill node's after its lease ended")
	// The caught payout: its effect ran once, under the spill node, and
	// its command was applied once — by home, after asking the witness.
	var intent, settled, turned int
	for _, e := range es {
		switch {
		case e.Kind == host.EffectKind && e.Holder == "spill-1" && strings.Contains(string(e.Payload), `"c":"`+caught.Command+`"`):
			intent++
		case e.Kind == host.EffectResolvedKind && strings.Contains(string(e.Payload), `"c":"`+caught.Command+`"`):
			settled++
			require.Equal(t, "home-1", e.Holder)
		case e.Kind == host.TurnKind && e.Key == caught.Command:
			turned++
			require.Equal(t, "home-1", e.Holder, "applied by the new holder")
			require.Contains(t, string(e.Payload), `"x":[{"k":"payout","r":{"paid":true}}]`)
		}
	}
	require.Equal(t, 1, intent, "the spill node journaled the intent of %s before the call", caught.Command)
	require.Equal(t, 1, settled, "home settled it by reconciling, not by invoking")
	require.Equal(t, 1, turned)
	require.Equal(t, 1, s.wit.snapshot()[caught.Command], "the witness saw one invocation")
	t.Logf("mid-turn expiry: spill's last turn %s after its last renewal; revoked at %d, granted{home-1, epoch %d} at %d; %d append.rejected journaled; payout %s: effect invoked once under epoch %d, its turn refused, settled by home from the witness and applied once",
		lastData.Sub(last.StoreTime).Round(time.Millisecond), revoked.Position, granted.Epoch, granted.Position, len(rejected), caught.Command, caught.Epoch)
}
