package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// NewStandby creates a streaming standby of primary, which must be
// running: pg_basebackup copies its data folder into a fresh temporary
// folder over a replication connection and, with -R, writes
// standby.signal and the primary_conninfo that points back at primary's
// port. The standby gets its own port and settings (cfg.Settings, e.g.
// hot_standby) like any cluster; its walreceiver connects with
// application_name name, which is what the primary's
// synchronous_standby_names refers to. It does not start it.
//
// The copy carries the primary's postgresql.conf, whose include line names
// the primary's own settings file; it is pointed at the standby's.
func NewStandby(ctx context.Context, primary *Cluster, name string, cfg Config) (*Cluster, error) {
	cfg = cfg.withDefaults()
	if fi, err := os.Stat(filepath.Join(cfg.BinDir, "pg_basebackup")); err != nil || fi.IsDir() {
		return nil, fmt.Errorf("%w: no pg_basebackup in %s (set %s)", ErrNoBinaries, cfg.BinDir, BinDirEnv)
	}
	if !primary.Running() {
		return nil, errors.New("pgcluster: NewStandby needs a running primary")
	}
	c, uid, gid, err := newFolder(cfg)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Cluster, error) {
		_ = os.RemoveAll(c.dir)
		return nil, err
	}
	// -X stream: the WAL written during the copy comes along; -c fast: no
	// wait for the next checkpoint. The conninfo -R writes carries
	// application_name because it was on the command line's conninfo.
	conninfo := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres application_name=%s", primary.Port(), name)
	if out, err := c.run(ctx, "pg_basebackup", "-d", conninfo, "-D", c.dataDir(), "-X", "stream", "-c", "fast", "-R"); err != nil {
		return fail(fmt.Errorf("pgcluster: pg_basebackup: %w\n%s", err, out))
	}
	conf := filepath.Join(c.dataDir(), "postgresql.conf")
	b, err := os.ReadFile(conf)
	if err != nil {
		return fail(fmt.Errorf("pgcluster: %w", err))
	}
	b = []byte(strings.ReplaceAll(string(b), primary.confPath(), c.confPath()))
	if err := os.WriteFile(conf, b, 0o600); err != nil {
		return fail(fmt.Errorf("pgcluster: %w", err))
	}
	if uid >= 0 {
		if err := os.Chown(conf, uid, gid); err != nil {
			return fail(fmt.Errorf("pgcluster: %w", err))
		}
	}
	if err := c.configure(pickPort(), uid, gid); err != nil {
		return fail(err)
	}
	return c, nil
}

// Kill is a crash of the server's machine, as near as one machine allows:
// SIGKILL to the postmaster and every backend at once (pg_ctl starts the
// postmaster as a session leader, so its process group holds them all).
// No backend finishes a commit, answers a client or sends more WAL; the
// next Start replays the WAL. Killing a stopped cluster is a no-op.
func (c *Cluster) Kill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running {
		return nil
	}
	pid, err := c.postmasterPID()
	if err != nil {
		return err
	}
	// The group first, so no backend outlives the postmaster; then the
	// postmaster itself, should it not lead its group.
	gerr := syscall.Kill(-pid, syscall.SIGKILL)
	perr := syscall.Kill(pid, syscall.SIGKILL)
	if gerr != nil && perr != nil {
		return fmt.Errorf("pgcluster: SIGKILL postmaster %d: %w", pid, perr)
	}
	c.running = false
	return nil
}

// Promote ends a standby's recovery (pg_ctl promote, waiting until it
// accepts writes).
func (c *Cluster) Promote(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running {
		return errors.New("pgcluster: Promote of a stopped cluster")
	}
	if out, err := c.pgctl(ctx, "promote"); err != nil {
		return fmt.Errorf("pgcluster: pg_ctl promote: %w\n%s", err, out)
	}
	return nil
}

// postmasterPID reads the first line of postmaster.pid.
func (c *Cluster) postmasterPID() (int, error) {
	b, err := os.ReadFile(filepath.Join(c.dataDir(), "postmaster.pid"))
	if err != nil {
		return 0, fmt.Errorf("pgcluster: %w", err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("pgcluster: postmaster.pid: bad pid %q", first)
	}
	return pid, nil
}
