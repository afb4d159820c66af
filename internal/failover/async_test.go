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
// counted as lost (the appends started after it must all be missing —
// the proof the window really lost writes). Effects the witness accepted
// twice without an uncertain report are counted: the ledger that recorded
// their commit (or the claim they ran under) was lost with the window, so
// the next holder ran them again; each must have first run inside the
// window — never one whose record predates it.
func TestAsynchronousStandbyFailover(t *testing.T) {
	t.Parallel()
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

	// A double ran first inside the window, never before the mark.
	first := map[string]time.Time{}
	for _, in := range s.l.invocations {
		if _, ok := first[in.key]; !ok {
			first[in.key] = in.at
		}
	}
	for _, key := range f.doubles {
		require.True(t, first[key].After(mark), "effect %s accepted twice, first at %s, before the mark %s",
			key, first[key].Format("15:04:05.000"), mark.Format("15:04:05.000"))
	}
	// How the doubles came about: the fences each key was accepted under.
	// The same fence twice is a claim lost with the window and handed out
	// again by the promoted standby.
	fences := map[string][]int64{}
	for _, in := range s.wit.Invocations() {
		if in.Accepted {
			fences[in.Key] = append(fences[in.Key], in.Fence)
		}
	}
	sameFence := 0
	for _, key := range f.doubles {
		fs := fences[key]
		for i := 1; i < len(fs); i++ {
			if fs[i] == fs[i-1] {
				sameFence++
				break
			}
		}
	}
	t.Logf("asynchronous standby: %d of %d doubles were accepted twice under one fence (a fence handed out again)", sameFence, len(f.doubles))
	t.Logf("asynchronous standby: lost %d completions, %d effect commits, %d events, %d journal appends (%d appended inside the window); "+
		"%d effects ran twice (all first run inside the window: %v)",
		f.lostCompletions, f.lostEffects, f.lostEvents, f.lostAppends, inWindow, len(f.doubles), f.doubles)
}
