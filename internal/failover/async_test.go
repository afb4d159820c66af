package failover

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAsynchronousStandbyFailover (SPEC §6 storage): the same load and
// failover with an asynchronous standby, which the primary does not wait
// for. To make the loss certain rather than a race on a fast loopback, the
// standby is first known to have every WAL record written up to a mark,
// then the primary's walsender is stopped (SIGSTOP): everything the
// primary commits from there on exists on the primary alone, and the kill
// destroys it. What was acknowledged before the mark is all present after
// the promotion; what was acknowledged after the walsender stopped is
// counted as lost, per kind (the appends started after it must all be
// missing — the proof the window really lost writes).
//
// What the loss must not cause: a fence handed out twice (the promoted
// standby issues fences above its timeline's floor, past every fence the
// lost window issued: driver/postgres/fencefloor.go), and an effect applied
// twice downstream. An effect whose intent and commit were lost with the
// window is run again by the next holder — the store cannot know it ran —
// and the downstream, which dedups by the stable idempotency key (run id +
// key, SPEC §3), answers it with the first result; each such re-run must
// have first run inside the window, never before the mark. Without the
// floor the test fails: TestAsynchronousStandbyFailoverWithoutFloor
// (-tags simbugs).
func TestAsynchronousStandbyFailover(t *testing.T) {
	t.Parallel()
	f := asynchronousFailover(t)
	require.Zero(t, f.reissued, "a fence was handed out to two claims")
	require.Empty(t, f.doubles, "an effect was applied twice downstream")
}

// asynchronousFailover runs the asynchronous-standby scenario and its
// loss checks, and returns what it found for the caller to judge the
// fences and doubles.
func asynchronousFailover(t *testing.T) figures {
	ctx, cancel := context.WithTimeout(context.Background(), 2*patience)
	defer cancel()
	p := newPair(t, false)
	s := newScenario(t, p, 60)
	s.awaitLoad(5, 15, 30)

	mark := time.Now()
	p.caughtUp(ctx) // everything acknowledged before mark is on the standby
	p.pauseReplication(ctx)
	paused := time.Now()
	c0, e0, a0 := s.l.counts()
	s.awaitLoad(c0+3, e0+6, a0+20) // acknowledged by the primary alone

	killed, promoted := p.failover(ctx)
	s.l.kill(killed)
	t.Logf("walsender stopped at %s (mark %s); primary killed at %s; standby promoted %v later",
		paused.Format("15:04:05.000"), mark.Format("15:04:05.000"), killed.Format("15:04:05.000"),
		promoted.Sub(killed).Round(time.Millisecond))
	// Writes go on, on the new primary: the appender's (which never runs
	// out of work, unlike the runs), then every run to the end.
	_, _, after := s.l.counts()
	s.awaitLoad(0, 0, after+20)
	s.awaitFinal()
	s.stopWorkers()
	s.stopAppender()
	require.Nil(t, s.appendErr.Load(), "an append was refused")

	f := s.check(mark)
	t.Logf("asynchronous standby: %s", f)
	require.Zero(t, f.lostBeforeMark, "a write acknowledged before the mark was lost")

	// Every append that started after the walsender stopped and was
	// acknowledged before the kill is gone: the window lost writes.
	journaled := s.journalKeys()
	inWindow := 0
	for _, a := range s.l.appends {
		if a.start.After(paused) && a.at.Before(killed) {
			inWindow++
			require.False(t, journaled[a.key], "append %s was acknowledged while the walsender was stopped and survived", a.key)
		}
	}
	require.GreaterOrEqual(t, inWindow, 1, "no append acknowledged inside the window")
	require.Positive(t, f.lostAppends)

	// An effect run again ran first inside the window, never before the mark.
	first := map[string]time.Time{}
	for _, in := range s.l.invocations {
		if _, ok := first[in.key]; !ok {
			first[in.key] = in.at
		}
	}
	for _, key := range f.reinvoked {
		require.True(t, first[key].After(mark), "effect %s invoked twice, first at %s, before the mark %s",
			key, first[key].Format("15:04:05.000"), mark.Format("15:04:05.000"))
	}
	// The fences each re-run key was accepted under: one fence twice would
	// be a claim lost with the window and handed out again.
	fences := map[string][]int64{}
	for _, in := range s.wit.Invocations() {
		if in.Accepted {
			fences[in.Key] = append(fences[in.Key], in.Fence)
		}
	}
	sameFence := 0
	for _, key := range f.reinvoked {
		fs := fences[key]
		for i := 1; i < len(fs); i++ {
			if fs[i] == fs[i-1] {
				sameFence++
				break
			}
		}
	}
	t.Logf("asynchronous standby: lost %d completions, %d effect commits, %d events, %d journal appends (%d appended inside the window); "+
		"%d effects invoked again by a later holder (all first run inside the window), %d of them under the fence they first ran under; "+
		"downstream: %d invocations, %d applied, %d deduped by key (%d under a later fence), %d rejected by fence, %d doubles; %d fences handed out twice",
		f.lostCompletions, f.lostEffects, f.lostEvents, f.lostAppends, inWindow, len(f.reinvoked), sameFence,
		f.calls, f.applied, f.deduped, f.dedupedLater, f.rejected, len(f.doubles), f.reissued)
	return f
}
