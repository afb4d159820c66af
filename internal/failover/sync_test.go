package failover

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSynchronousStandbyFailover (SPEC §6 storage): Leasehold on a primary
// whose synchronous standby must flush every commit before it is answered,
// through a multi-host URL with target_session_attrs=read-write. Mid-load
// the primary is killed with SIGKILL and the standby promoted. Leasehold
// reconnects by itself — nothing in the test reopens it — every run
// completes, and every write acknowledged before the kill is on the
// promoted standby: completions, effect commits, events acknowledged by
// Step, journal appends. No effect reached the witness twice but after an
// uncertain report; a journal key is journaled once however often its
// unknown-outcome append was sent again.
func TestSynchronousStandbyFailover(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*patience)
	defer cancel()
	p := newPair(t, true)
	s := newScenario(t, p, 60)
	s.awaitLoad(8, 30, 30) // mid-load

	killed, promoted := p.failover(ctx)
	s.l.kill(killed)
	t.Logf("primary killed (SIGKILL, every server process) at %s; standby promoted %v later",
		killed.Format("15:04:05.000"), promoted.Sub(killed).Round(time.Millisecond))
	// Writes go on, on the new primary: the appender's (which never runs
	// out of work, unlike the runs), then every run to the end.
	_, _, after := s.l.counts()
	s.awaitLoad(0, 0, after+20)
	s.awaitFinal()
	s.stopWorkers()
	s.stopAppender()
	require.Nil(t, s.appendErr.Load(), "an append was refused")

	f := s.check(killed)
	t.Logf("synchronous standby: %s", f)
	require.Zero(t, f.lostCompletions+f.lostEffects+f.lostEvents+f.lostAppends, "a synchronous standby loses no acknowledged write")
	require.Empty(t, f.reinvoked, "effects accepted twice without an uncertain report")
	require.Empty(t, f.doubles, "effects applied twice downstream")
	require.Zero(t, f.reissued, "a fence handed out to two claims")
	require.Equal(t, f.runs, f.completed, "every run completed")
	require.NotZero(t, f.firstWrite, "no write started after the kill succeeded")
}
