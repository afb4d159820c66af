package failover

import (
	"context"
	"fmt"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// figures are what a scenario found after the failover.
type figures struct {
	runs, completed, failed int
	// acknowledged, and of those missing after the promotion
	ackCompletions, lostCompletions int
	ackEffects, lostEffects         int
	ackEvents, lostEvents           int
	ackAppends, lostAppends         int
	// acknowledged before the cut-off mark and missing: never allowed
	lostBeforeMark int
	uncertain      int // uncertain effect reports (reconciled with the witness)
	unknown        int // writes that failed without an answer (retried or left to the protocol)
	// The downstream's view (an idempotent witness): every call; applied;
	// accepted but answered with the key's first result (of which under a
	// higher fence than the applied call's: a later holder running an
	// effect again); refused for a lower fence.
	calls, applied, deduped, dedupedLater, rejected int
	// reinvoked: keys the witness accepted more often than one plus their
	// uncertain reports — the library called the effect again (the
	// fence-only witness's "double").
	reinvoked []string
	// doubles: effects (run id and key, as the test names them) applied
	// twice downstream. The one count that is a wrong effect.
	doubles []string
	// reissued: handler starts under a (run, fence) an earlier claim had.
	reissued   int
	firstWrite time.Duration // kill → first write started after it that succeeded
	firstOp    string
}

func (f figures) String() string {
	return fmt.Sprintf("runs %d (completed %d, failed %d); acknowledged → lost: completions %d → %d, effect commits %d → %d, "+
		"events %d → %d, journal appends %d → %d; uncertain effects reconciled %d; writes with unknown outcome %d; "+
		"downstream: invocations %d, applied %d, deduped by key %d (%d under a later fence), rejected by fence %d; "+
		"effects invoked again %d; doubles (applied twice) %d; fences handed out twice %d; kill → first successful write %v (%s)",
		f.runs, f.completed, f.failed, f.ackCompletions, f.lostCompletions, f.ackEffects, f.lostEffects,
		f.ackEvents, f.lostEvents, f.ackAppends, f.lostAppends, f.uncertain, f.unknown,
		f.calls, f.applied, f.deduped, f.dedupedLater, f.rejected, len(f.reinvoked), len(f.doubles), f.reissued,
		f.firstWrite.Round(time.Millisecond), f.firstOp)
}

// check reads the new primary and the witness once every run is final.
// Every write acknowledged before mark must be present (mark is the kill
// for a synchronous standby, the last position the asynchronous one is
// known to have received); those acknowledged after it are counted as lost
// when missing. An effect commit counts as lost when the store holds the
// key committed under another fence: a later holder ran it again. A double
// is an effect applied twice downstream; an effect invoked again (accepted
// more often than one plus its uncertain reports) is counted apart, since
// the idempotent witness absorbs it.
func (s *scenario) check(mark time.Time) figures {
	t := s.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	d := s.c.Driver()
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	f := figures{runs: len(s.ids), unknown: l.unknown, firstOp: l.firstOp, reissued: l.reissued}
	if !l.firstSeen.IsZero() {
		f.firstWrite = l.firstSeen.Sub(l.killedAt)
	}
	missing := func(at time.Time, what string) {
		if at.Before(mark) {
			f.lostBeforeMark++
			t.Errorf("acknowledged at %s, before the mark %s, and missing after the promotion: %s",
				at.Format("15:04:05.000"), mark.Format("15:04:05.000"), what)
		}
	}

	state := map[int64]*driver.Run{}
	for _, id := range s.ids {
		r, err := d.RunGet(ctx, &driver.RunGetParams{ID: id})
		require.NoError(t, err)
		state[id] = r
		switch r.State {
		case runs.StateCompleted:
			f.completed++
		case runs.StateFailed:
			f.failed++
			require.NotEmpty(t, r.Reason, "run %d failed without a reason", id)
		default:
			t.Errorf("run %d is %s, not final", id, r.State)
		}
	}

	f.ackCompletions = len(l.completions)
	for _, c := range l.completions {
		r := state[c.run]
		if r.State != runs.StateCompleted || r.Fence != c.fence {
			f.lostCompletions++
			missing(c.at, fmt.Sprintf("completion of run %d under fence %d (run is %s under fence %d)", c.run, c.fence, r.State, r.Fence))
		}
	}

	committed := map[string]int64{} // "run:key" → the fence it is committed under
	for _, id := range s.ids {
		es, err := d.RunEffectList(ctx, &driver.RunEffectListParams{RunID: id})
		require.NoError(t, err)
		for _, e := range es {
			if e.Committed {
				committed[fmt.Sprintf("%d:%s", id, e.Key)] = e.Fence
			}
		}
		if state[id].State == runs.StateCompleted {
			for i := range effects {
				key := fmt.Sprintf("%d:e%d", id, i)
				_, ok := committed[key]
				require.True(t, ok, "completed run %d without effect %s committed", id, key)
				require.True(t, s.wit.Has(key), "completed run %d: effect %s never accepted downstream", id, key)
			}
		}
	}
	f.ackEffects = len(l.effects)
	for _, e := range l.effects {
		if fence, ok := committed[fmt.Sprintf("%d:%s", e.run, e.key)]; !ok || fence != e.fence {
			f.lostEffects++
			missing(e.at, fmt.Sprintf("effect %d:%s committed under fence %d (stored: %v under %d)", e.run, e.key, e.fence, ok, fence))
		}
	}

	stored := map[[3]int64]string{}
	for _, id := range s.ids {
		evs, err := d.RunEventList(ctx, &driver.RunEventListParams{RunID: id, Limit: 1000})
		require.NoError(t, err)
		for _, ev := range evs {
			stored[[3]int64{id, ev.Fence, ev.Seq}] = string(ev.Payload)
		}
	}
	f.ackEvents = len(l.events)
	for _, e := range l.events {
		got, ok := stored[[3]int64{e.run, e.fence, e.seq}]
		if !ok {
			f.lostEvents++
			missing(e.at, fmt.Sprintf("event %d/%d/%d", e.run, e.fence, e.seq))
			continue
		}
		require.JSONEq(t, e.payload, got, "event %d/%d/%d holds another payload", e.run, e.fence, e.seq)
	}

	journaled := map[string][]int64{} // key → positions
	for from := int64(1); ; {
		es, err := d.JournalRead(ctx, &driver.JournalReadParams{World: worldID, From: from, Limit: 1000})
		require.NoError(t, err)
		for _, e := range es {
			if e.Key != "" {
				journaled[e.Key] = append(journaled[e.Key], e.Position)
			}
		}
		if len(es) < 1000 {
			break
		}
		from = es[len(es)-1].Position + 1
	}
	for key, ps := range journaled {
		require.Len(t, ps, 1, "journal key %s appended more than once: %v", key, ps)
	}
	f.ackAppends = len(l.appends)
	for _, a := range l.appends {
		ps, ok := journaled[a.key]
		if !ok {
			f.lostAppends++
			missing(a.at, fmt.Sprintf("journal append %s at position %d", a.key, a.pos))
			continue
		}
		require.Equal(t, a.pos, ps[0], "journal append %s acknowledged at %d, found at %d", a.key, a.pos, ps[0])
	}

	for key, n := range s.wit.Accepted() {
		if n > 1+l.uncertain[key] {
			f.reinvoked = append(f.reinvoked, key)
		}
	}
	applied := map[string]int64{} // key → the fence of its applied call
	for _, in := range s.wit.Invocations() {
		f.calls++
		switch {
		case !in.Accepted:
			f.rejected++
		case in.Deduped:
			f.deduped++
			if in.Fence > applied[in.Key] {
				f.dedupedLater++
			}
		default:
			f.applied++
			applied[in.Key] = in.Fence
		}
	}
	times := map[string]int{}
	for _, in := range l.invocations {
		if !in.deduped {
			times[in.key]++
			if times[in.key] == 2 {
				f.doubles = append(f.doubles, in.key)
			}
		}
	}
	for _, n := range l.uncertain {
		f.uncertain += n
	}
	return f
}

// journalKeys is the set of keys in the world's journal now.
func (s *scenario) journalKeys() map[string]bool {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	keys := map[string]bool{}
	for from := int64(1); ; {
		es, err := s.c.Driver().JournalRead(ctx, &driver.JournalReadParams{World: worldID, From: from, Limit: 1000})
		require.NoError(s.t, err)
		for _, e := range es {
			keys[e.Key] = true
		}
		if len(es) < 1000 {
			return keys
		}
		from = es[len(es)-1].Position + 1
	}
}
