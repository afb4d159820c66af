package failover

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/pgcluster"
)

// standbyName is the standby's application_name, which the primary's
// synchronous_standby_names refers to.
const standbyName = "standby1"

// pair is a primary and its streaming standby.
type pair struct {
	t                *testing.T
	primary, standby *pgcluster.Cluster
	sync             bool
}

// newPair starts a primary and a pg_basebackup standby of it and waits
// until the standby streams (and, with sync, is the synchronous one).
func newPair(t *testing.T, sync bool) *pair {
	t.Helper()
	settings := map[string]string{
		"wal_level":       "replica",
		"max_wal_senders": "4",
		// The server's own view of a dead standby connection: loopback
		// sees a kill at once, so this only bounds the odd case.
		"wal_sender_timeout": "10s",
	}
	if sync {
		// synchronous_commit=on (pgcluster's, and the driver sets it per
		// session) waits for the standby's flush: no commit is answered
		// before the standby has it on disk.
		settings["synchronous_standby_names"] = standbyName
	}
	p := &pair{t: t, sync: sync}
	p.primary = pgcluster.StartConfig(t, pgcluster.Config{Settings: settings})
	p.standby = pgcluster.StartStandby(t, p.primary, standbyName, pgcluster.Config{Settings: map[string]string{
		"hot_standby": "on",
		// How often the standby reports its flush position: the primary
		// answers a synchronous commit on that report.
		"wal_receiver_status_interval": "1s",
	}})
	want := "async"
	if sync {
		want = "sync"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.primary.URL())
	require.NoError(t, err)
	defer func() { _ = conn.Close(context.Background()) }()
	var state string
	require.Eventually(t, func() bool {
		err := conn.QueryRow(ctx, "SELECT sync_state FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'",
			standbyName).Scan(&state)
		return err == nil && state == want
	}, time.Minute, 20*time.Millisecond, "the standby is not streaming as %s (last: %q)", want, state)
	return p
}

// url is the multi-host connection string Leasehold is given: both
// servers, and target_session_attrs=read-write, so pgx connects to
// whichever accepts writes — the primary, and after the promotion the
// standby. connect_timeout bounds a connection attempt to a server that
// does not answer at all.
func (p *pair) url() string {
	return fmt.Sprintf("postgres://postgres@%s,%s/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		p.primary.Addr(), p.standby.Addr())
}

// walsenderPID is the primary's walsender process for the standby.
func (p *pair) walsenderPID(ctx context.Context) int {
	conn, err := pgx.Connect(ctx, p.primary.URL())
	require.NoError(p.t, err)
	defer func() { _ = conn.Close(context.Background()) }()
	var pid int
	require.NoError(p.t, conn.QueryRow(ctx, "SELECT pid FROM pg_stat_replication WHERE application_name = $1", standbyName).Scan(&pid))
	return pid
}

// pauseReplication stops (SIGSTOP) the primary's walsender: from here the
// primary writes WAL the standby never receives. It is never continued.
func (p *pair) pauseReplication(ctx context.Context) {
	pid := p.walsenderPID(ctx)
	require.NoError(p.t, syscall.Kill(pid, syscall.SIGSTOP))
	// A stopped process outlives the kill of its server's group (seen:
	// stopped walsenders left behind, parent 1, data dir deleted): it is
	// killed by name too, when the test ends.
	// (Only while the pid is still a walsender: a pid freed by the kill
	// may have been reused.)
	p.t.Cleanup(func() {
		if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.Contains(string(cmd), "walsender") {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// failover kills the primary (SIGKILL to every server process) and
// promotes the standby, returning when the standby accepts writes.
func (p *pair) failover(ctx context.Context) (killed, promoted time.Time) {
	require.NoError(p.t, p.primary.Kill())
	killed = time.Now()
	require.NoError(p.t, p.standby.Promote(ctx))
	return killed, time.Now()
}

// caughtUp waits until the standby has received and flushed every WAL
// record the primary had written when it was called.
func (p *pair) caughtUp(ctx context.Context) {
	pc, err := pgx.Connect(ctx, p.primary.URL())
	require.NoError(p.t, err)
	defer func() { _ = pc.Close(context.Background()) }()
	sc, err := pgx.Connect(ctx, p.standby.URL())
	require.NoError(p.t, err)
	defer func() { _ = sc.Close(context.Background()) }()
	var lsn string
	require.NoError(p.t, pc.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn))
	require.Eventually(p.t, func() bool {
		var ok bool
		err := sc.QueryRow(ctx, "SELECT pg_last_wal_receive_lsn() >= $1::pg_lsn", lsn).Scan(&ok)
		return err == nil && ok
	}, time.Minute, 5*time.Millisecond, "the standby did not receive the primary's WAL up to %s", lsn)
}
