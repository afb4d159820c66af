package faulttest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/runs"
)

// checkOptions adjusts the checks to a scenario.
type checkOptions struct {
	// lateAllowed: invocations that reach the witness after their lease
	// expired are expected (the paused process) and must all be refused.
	// Otherwise there must be none.
	lateAllowed bool
	// storeDown is when the store itself was down (wall clock, which is
	// the store's: one machine). No reclaimer can reclaim then, so the
	// part of an outage between an expiry and its reclaim does not count
	// toward the strand bound.
	storeDown []interval
}

// figures is what a scenario logs.
type figures struct {
	runs, completed, failed, attempts int
	keys, invocations, refused        int // distinct keys accepted downstream; calls; calls refused
	uncertain                         int // uncertain reports
	events, acked                     int // events in the store; events acknowledged by Step
	reclaims                          int
	maxStrand, maxNetStrand           time.Duration // the second net of the environment's delays
	late                              int           // calls that reached the witness after their lease expired

	reports map[string]int // uncertain reports per idempotency key
}

func (f figures) String() string {
	return fmt.Sprintf("runs %d (completed %d, failed %d; %d attempts), effects %d keys (%d invocations, %d refused), events %d (%d acknowledged), uncertain %d, reclaims %d (max strand %v, %v net of the environment's delays; bound T_lease+P+S = %v), late calls %d",
		f.runs, f.completed, f.failed, f.attempts, f.keys, f.invocations, f.refused, f.events, f.acked,
		f.uncertain, f.reclaims, f.maxStrand.Round(time.Millisecond), f.maxNetStrand.Round(time.Millisecond), strandBound, f.late)
}

// check runs the checks every scenario shares (see the package doc) once
// the workers have stopped, logs the figures and returns them.
func (s *scenario) check(o checkOptions) figures {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	log, acks, stats := s.obs.snapshot()
	var f figures
	final := s.checkRuns(ctx, &f)
	s.checkWitness(log, &f)
	s.checkLateCalls(log, o, &f)
	s.checkEvents(ctx, final, acks, &f)
	s.checkStrands(o, &f)
	s.logFigures(f, o, stats)
	return f
}

// checkRuns: every run accounted for — completed by the holder of its
// current fence with every effect committed in the ledger and accepted
// downstream, or failed with a reason.
func (s *scenario) checkRuns(ctx context.Context, f *figures) map[int64]*driver.Run {
	t := s.t
	t.Helper()
	final := map[int64]*driver.Run{}
	for _, id := range s.ids {
		r, err := s.store.RunGet(ctx, &driver.RunGetParams{ID: id})
		require.NoError(t, err)
		final[id] = r
		f.runs++
		f.attempts += r.Attempt
		switch r.State {
		case runs.StateCompleted:
			f.completed++
			var res struct{ Fence int64 }
			require.NoError(t, json.Unmarshal(r.Result, &res), "run %d result %s", id, r.Result)
			require.Equal(t, r.Fence, res.Fence, "run %d completed by the holder of its current fence", id)
			effs, err := s.store.RunEffectList(ctx, &driver.RunEffectListParams{RunID: id})
			require.NoError(t, err)
			settled := map[string]bool{}
			for _, e := range effs {
				settled[e.Key] = e.Committed
			}
			for i := range s.cfg.Effects {
				require.True(t, settled[effectKey(i)], "run %d completed with effect %s not committed", id, effectKey(i))
				require.True(t, s.obs.wit.Has(fmt.Sprintf("%d:%s", id, effectKey(i))),
					"run %d completed with effect %s never accepted downstream", id, effectKey(i))
			}
		case runs.StateFailed:
			f.failed++
			require.NotEmpty(t, r.Reason, "run %d failed without a reason", id)
		default:
			require.Failf(t, "run not accounted for", "run %d is %s", id, r.State)
		}
	}
	return final
}

// checkWitness: the observer's log is the witness's own record, and the
// n-th invocation of a key follows at least n-1 uncertain reports of it.
func (s *scenario) checkWitness(log []observation, f *figures) {
	t := s.t
	t.Helper()
	var recorded, logged []string
	for _, in := range s.obs.wit.Invocations() {
		recorded = append(recorded, fmt.Sprintf("%s@%d:%v", in.Key, in.Fence, in.Accepted))
	}
	calls, reports := map[string]int{}, map[string]int{}
	for _, ob := range log {
		if ob.Uncertain {
			reports[ob.Key]++
			f.uncertain++
			continue
		}
		logged = append(logged, fmt.Sprintf("%s@%d:%v", ob.Key, ob.Fence, ob.Accepted))
		require.GreaterOrEqual(t, reports[ob.Key], calls[ob.Key],
			"key %s invoked for the %d. time (fence %d) after only %d uncertain report(s)", ob.Key, calls[ob.Key]+1, ob.Fence, reports[ob.Key])
		calls[ob.Key]++
		f.invocations++
		if !ob.Accepted {
			f.refused++
		}
	}
	require.Equal(t, recorded, logged, "the observer's log is the witness's record")
	f.keys = len(s.obs.wit.Accepted())
	f.reports = reports
}

// checkLateCalls: no call reached the witness after the lease it was made
// under had expired on the store clock (as the reclaim recorded it) — or,
// where that is the scenario, every such call was refused. Both clocks
// are this machine's.
func (s *scenario) checkLateCalls(log []observation, o checkOptions, f *figures) {
	t := s.t
	t.Helper()
	expired := map[string]time.Time{} // "<run>@<fence>" → expiry
	for _, rc := range s.reclaims.of("") {
		require.NoError(t, rc.Err)
		expired[fmt.Sprintf("%d@%d", rc.Run.ID, rc.Fence)] = rc.Expiry
	}
	for _, ob := range log {
		if ob.Uncertain {
			continue
		}
		run, _, _ := strings.Cut(ob.Key, ":")
		exp, ok := expired[fmt.Sprintf("%s@%d", run, ob.Fence)]
		if !ok || ob.At.Before(exp) {
			continue
		}
		f.late++
		if !o.lateAllowed {
			require.Failf(t, "a call after its lease expired", "%s under fence %d reached the witness %v after the lease expired (accepted: %v)",
				ob.Key, ob.Fence, ob.At.Sub(exp), ob.Accepted)
		}
		require.False(t, ob.Accepted, "the witness accepted %s under fence %d %v after its lease expired", ob.Key, ob.Fence, ob.At.Sub(exp))
	}
}

// checkEvents: every event a Step acknowledged is stored once, in (fence,
// seq) order, with its kind and payload; each fence's events are gapless
// from 1; a completed run has all the events of its completing attempt.
func (s *scenario) checkEvents(ctx context.Context, final map[int64]*driver.Run, acks []ackReport, f *figures) {
	t := s.t
	t.Helper()
	byRun := map[int64][]ackReport{}
	for _, a := range acks {
		byRun[a.Run] = append(byRun[a.Run], a)
	}
	f.acked = len(acks)
	for _, id := range s.ids {
		evs, err := s.store.RunEventList(ctx, &driver.RunEventListParams{RunID: id, Limit: 10000})
		require.NoError(t, err)
		f.events += len(evs)
		stored := map[eventID]*driver.RunEvent{}
		last := map[int64]int64{} // fence → its last seq
		for i, ev := range evs {
			if i > 0 {
				prev := evs[i-1]
				require.True(t, ev.Fence > prev.Fence || (ev.Fence == prev.Fence && ev.Seq > prev.Seq),
					"run %d: event (%d,%d) after (%d,%d)", id, ev.Fence, ev.Seq, prev.Fence, prev.Seq)
			}
			require.Equal(t, last[ev.Fence]+1, ev.Seq, "run %d: a gap in fence %d's events", id, ev.Fence)
			last[ev.Fence] = ev.Seq
			stored[eventID{id, ev.Fence, ev.Seq}] = ev
		}
		for _, a := range byRun[id] {
			ev := stored[eventID{a.Run, a.Fence, a.Seq}]
			require.NotNil(t, ev, "run %d: event (%d,%d) acknowledged to %s is lost", id, a.Fence, a.Seq, a.Owner)
			require.Equal(t, a.Kind, ev.Kind)
			require.JSONEq(t, string(a.Payload), string(ev.Payload), "run %d: event (%d,%d)", id, a.Fence, a.Seq)
		}
		if r := final[id]; r.State == runs.StateCompleted {
			require.Equal(t, int64(s.cfg.Effects), last[r.Fence], "run %d: the completing attempt's events", id)
		}
	}
}

// checkStrands: no run was reclaimed before its expiry, and each was
// reclaimed within T_lease + P + S of its holder's last renewal, from the
// store's own timestamps, net of the environment's measured delays (see
// strand_test.go).
func (s *scenario) checkStrands(o checkOptions, f *figures) {
	t := s.t
	t.Helper()
	for _, rc := range s.reclaims.of("") {
		f.reclaims++
		f.maxStrand = max(f.maxStrand, rc.Strand)
		require.False(t, rc.Run.ReclaimedAt.Before(rc.Expiry), "run %d reclaimed at %v, before its expiry %v", rc.Run.ID, rc.Run.ReclaimedAt, rc.Expiry)
		env := s.environment(rc, o)
		net := rc.Strand - env.total()
		f.maxNetStrand = max(f.maxNetStrand, net)
		require.LessOrEqual(t, net, strandBound,
			"run %d (owner %s, fence %d) reclaimed %v after its last renewal (%s): past T_lease + P + S; expiry %s, reclaim %s; the reclaimer's passes:%s",
			rc.Run.ID, rc.Owner, rc.Fence, rc.Strand, env, rc.Expiry.Format("15:04:05.000"), rc.Run.ReclaimedAt.Format("15:04:05.000"),
			s.reclaims.passesAround(rc.Expiry, rc.Run.ReclaimedAt))
	}
}

// logFigures logs f, each worker's keeper counters and each reclaim.
func (s *scenario) logFigures(f figures, o checkOptions, stats map[string]keeper.Stats) {
	t := s.t
	t.Helper()
	t.Logf("%s", f)
	owners := make([]string, 0, len(stats))
	for o := range stats {
		owners = append(owners, o)
	}
	sort.Strings(owners)
	for _, o := range owners {
		st := stats[o]
		t.Logf("  keeper %s: drains %d (failed %d), lost %d, self-stops %d, gate pass %d / after a flush %d / refused %d, max lag %v (D_stop %v)",
			o, st.Flushes, st.FlushErrors, st.Lost, st.SelfStops, st.GatePass, st.GateFlushPass, st.GateRefuse,
			st.MaxLag.Round(time.Millisecond), timing.Stop)
	}
	for _, rc := range s.reclaims.of("") {
		t.Logf("  reclaimed run %d from %s (fence %d): strand %v (store times: renewal %s, expiry %s, reclaim %s; %s)",
			rc.Run.ID, rc.Owner, rc.Fence, rc.Strand.Round(time.Millisecond),
			rc.Expiry.Add(-timing.Lease).Format("15:04:05.000"), rc.Expiry.Format("15:04:05.000"), rc.Run.ReclaimedAt.Format("15:04:05.000"),
			s.environment(rc, o))
	}
}
