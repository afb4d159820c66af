package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrNoBinaries: the PostgreSQL server binaries (initdb, pg_ctl, postgres)
// are not where Config.BinDir says.
var ErrNoBinaries = errors.New("pgcluster: PostgreSQL binaries not found")

// BinDirEnv names the environment variable that overrides DefaultBinDir.
const BinDirEnv = "LEASEHOLD_PG_BIN"

// DefaultBinDir is where Debian and Ubuntu install PostgreSQL 15.
const DefaultBinDir = "/usr/lib/postgresql/15/bin"

// serverUser is the account the binaries run as when the test runs as root.
const serverUser = "postgres"

// Config configures a cluster. Zero values mean the defaults.
type Config struct {
	// BinDir holds initdb, pg_ctl and postgres. Defaults to $LEASEHOLD_PG_BIN,
	// else DefaultBinDir.
	BinDir string
	// Settings are extra postgresql.conf settings (name → value, quoted as a
	// string), applied after the package's own, so they may override them.
	Settings map[string]string
	// StartTimeout bounds pg_ctl's wait for the server to accept
	// connections, crash recovery included, and its wait for a stop.
	// Defaults to 60s.
	StartTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.BinDir == "" {
		c.BinDir = os.Getenv(BinDirEnv)
	}
	if c.BinDir == "" {
		c.BinDir = DefaultBinDir
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = time.Minute
	}
	return c
}

// Cluster is one throwaway PostgreSQL cluster. Its methods are safe for
// concurrent use; Start, Stop, Restart and Close run one at a time.
type Cluster struct {
	cfg Config
	dir string // the temporary folder: data/, server.log, pgcluster.conf, the unix socket
	// runAs prefixes every server binary's command line: runuser as
	// serverUser when we are root (PostgreSQL refuses root), else nothing.
	runAs []string

	// mu serializes the lifecycle methods and guards the fields below. It
	// is held across pg_ctl on purpose: a Stop must not interleave with a
	// Start of the same data folder.
	mu      sync.Mutex
	port    int
	started bool // Start has succeeded once: the port is in URLs handed out
	running bool
	closed  bool
}

// New initdb's a cluster into a fresh temporary folder and configures it on
// a free port of 127.0.0.1. It does not start it. Close removes the folder.
func New(ctx context.Context, cfg Config) (*Cluster, error) {
	cfg = cfg.withDefaults()
	for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
		if fi, err := os.Stat(filepath.Join(cfg.BinDir, b)); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("%w: no executable %s in %s (set %s)", ErrNoBinaries, b, cfg.BinDir, BinDirEnv)
		}
	}
	c, uid, gid, err := newFolder(cfg)
	if err != nil {
		return nil, err
	}
	dir := c.dir
	fail := func(err error) (*Cluster, error) {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	// fsync stays on (initdb syncs its files too): these clusters exist to
	// test what survives a crash.
	if out, err := c.run(ctx, "initdb", "-D", c.dataDir(), "-U", "postgres", "-A", "trust", "-E", "UTF8",
		"--locale=C", "--no-instructions"); err != nil {
		return fail(fmt.Errorf("pgcluster: initdb: %w\n%s", err, out))
	}
	// Our settings live in their own file, included last, so a new port
	// is a rewrite of that file only.
	conf, err := os.OpenFile(filepath.Join(c.dataDir(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fail(fmt.Errorf("pgcluster: %w", err))
	}
	_, err = fmt.Fprintf(conf, "\n# pgcluster\ninclude '%s'\n", c.confPath())
	if cerr := conf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(fmt.Errorf("pgcluster: postgresql.conf: %w", err))
	}
	if err := c.configure(pickPort(), uid, gid); err != nil {
		return fail(err)
	}
	return c, nil
}

// newFolder makes a cluster's temporary folder, handed to serverUser when
// we are root (uid, gid then name that user; else -1).
func newFolder(cfg Config) (c *Cluster, uid, gid int, err error) {
	c = &Cluster{cfg: cfg}
	uid, gid = -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup(serverUser)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("pgcluster: running as root, and PostgreSQL must not: looking up user %q: %w", serverUser, err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		c.runAs = []string{"runuser", "-u", serverUser, "--"}
	}
	// A short path under /tmp: the unix socket lives here, and its path
	// must fit in sun_path (107 bytes).
	dir, err := os.MkdirTemp("", "pgcluster-")
	if err != nil {
		return nil, 0, 0, fmt.Errorf("pgcluster: creating the folder: %w", err)
	}
	c.dir = dir
	if uid >= 0 {
		if err := os.Chown(dir, uid, gid); err != nil {
			_ = os.RemoveAll(dir)
			return nil, 0, 0, fmt.Errorf("pgcluster: handing %s to %s: %w", dir, serverUser, err)
		}
	}
	return c, uid, gid, nil
}

func (c *Cluster) dataDir() string  { return filepath.Join(c.dir, "data") }
func (c *Cluster) confPath() string { return filepath.Join(c.dir, "pgcluster.conf") }
func (c *Cluster) logPath() string  { return filepath.Join(c.dir, "server.log") }

// configure (re)writes the cluster's own settings for port.
func (c *Cluster) configure(port, uid, gid int) error {
	settings := []string{
		"listen_addresses = '127.0.0.1'",
		fmt.Sprintf("port = %d", port),
		fmt.Sprintf("unix_socket_directories = '%s'", c.dir),
		// Durability as in production (SPEC §1): we test what survives.
		"fsync = on",
		"synchronous_commit = on",
		"full_page_writes = on",
		"max_connections = 100",
		"shared_buffers = '32MB'",
		"logging_collector = off",
		"log_min_messages = warning",
	}
	for k, v := range c.cfg.Settings {
		settings = append(settings, fmt.Sprintf("%s = '%s'", k, strings.ReplaceAll(v, "'", "''")))
	}
	if err := os.WriteFile(c.confPath(), []byte(strings.Join(settings, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("pgcluster: writing %s: %w", c.confPath(), err)
	}
	if uid >= 0 {
		if err := os.Chown(c.confPath(), uid, gid); err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
	}
	c.port = port
	return nil
}

// pickPort returns a port of 127.0.0.1 that is free now, preferably below
// the kernel's ephemeral range (32768 and up on Linux), where no outgoing
// connection takes it as its source port while the server is down between
// a Stop and a Start. Start still retries with another port should the
// first start lose a race for it.
func pickPort() int {
	for range 50 {
		p := 20000 + rand.IntN(12000)
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			_ = l.Close()
			return p
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0 // the start fails and says why
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// run runs a server binary (as serverUser when we are root) in the
// cluster's folder and returns its combined output.
func (c *Cluster) run(ctx context.Context, bin string, args ...string) (string, error) {
	argv := append(append(append([]string{}, c.runAs...), filepath.Join(c.cfg.BinDir, bin)), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = c.dir // serverUser may not enter the caller's working directory
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	// pg_ctl start leaves the postmaster running with its output in
	// server.log; should anything still hold our pipe, do not wait on it.
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// Start starts the server and returns once it accepts connections — after
// crash recovery, when the last stop was immediate.
func (c *Cluster) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return errors.New("pgcluster: Start after Close")
	case c.running:
		return nil
	}
	for attempt := 0; ; attempt++ {
		mark := c.logSize()
		out, err := c.pgctl(ctx, "start", "-l", c.logPath())
		if err == nil {
			c.running, c.started = true, true
			return nil
		}
		// Lost the race for the port between pickPort and the bind: take
		// another, unless the port is already in URLs we handed out.
		if !c.started && attempt < 3 && strings.Contains(c.logSince(mark), "could not bind") {
			uid, gid := c.folderOwner()
			if cerr := c.configure(pickPort(), uid, gid); cerr != nil {
				return cerr
			}
			continue
		}
		return fmt.Errorf("pgcluster: pg_ctl start: %w\n%s\nserver log:\n%s", err, out, c.logSince(mark))
	}
}

// Stop stops the server with `pg_ctl stop -m immediate`: every server
// process quits at once, without a checkpoint; clients see their
// connections dropped and the next Start replays the WAL. Stopping a
// stopped cluster is a no-op.
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopLocked(ctx)
}

func (c *Cluster) stopLocked(ctx context.Context) error {
	if !c.running {
		return nil
	}
	if out, err := c.pgctl(ctx, "stop", "-m", "immediate"); err != nil {
		return fmt.Errorf("pgcluster: pg_ctl stop -m immediate: %w\n%s", err, out)
	}
	c.running = false
	return nil
}

// pgctl runs pg_ctl on the data folder, waiting (bounded by StartTimeout)
// for the action to finish.
func (c *Cluster) pgctl(ctx context.Context, action string, args ...string) (string, error) {
	secs := strconv.Itoa(int(c.cfg.StartTimeout.Round(time.Second) / time.Second))
	ctx, cancel := context.WithTimeout(ctx, c.cfg.StartTimeout+10*time.Second)
	defer cancel()
	return c.run(ctx, "pg_ctl", append([]string{action, "-D", c.dataDir(), "-w", "-t", secs}, args...)...)
}

// Restart is Stop (immediate) then Start.
func (c *Cluster) Restart(ctx context.Context) error {
	if err := c.Stop(ctx); err != nil {
		return err
	}
	return c.Start(ctx)
}

// Running reports whether the server was started and not stopped since.
func (c *Cluster) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running
}

// Port is the server's TCP port on 127.0.0.1.
func (c *Cluster) Port() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.port
}

// Addr is "127.0.0.1:port", for a fault proxy's target.
func (c *Cluster) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port())) }

// URL is a connection URL of the cluster's "postgres" database as the
// superuser "postgres", over TCP. It stays valid across Stop and Start.
func (c *Cluster) URL() string { return c.URLFor("postgres") }

// URLFor is URL for another database of the cluster.
func (c *Cluster) URLFor(database string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", c.Addr(), database)
}

// Dir is the cluster's temporary folder (data/ and server.log are in it).
func (c *Cluster) Dir() string { return c.dir }

// ServerLog returns the server's log so far (its tail beyond 64 KiB is
// what is kept), for a failing test to print.
func (c *Cluster) ServerLog() string { return c.logSince(max(c.logSize()-64<<10, 0)) }

func (c *Cluster) logSize() int64 {
	fi, err := os.Stat(c.logPath())
	if err != nil {
		return 0
	}
	return fi.Size()
}

func (c *Cluster) logSince(off int64) string {
	f, err := os.Open(c.logPath())
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(off, 0); err != nil {
		return ""
	}
	b := make([]byte, 64<<10)
	n, _ := f.Read(b)
	return strings.TrimSpace(string(b[:n]))
}

func (c *Cluster) folderOwner() (uid, gid int) {
	if len(c.runAs) == 0 {
		return -1, -1
	}
	fi, err := os.Stat(c.dir)
	if err != nil {
		return -1, -1
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, -1
	}
	return int(st.Uid), int(st.Gid)
}

// Close stops the server (immediately) if it runs and removes the folder.
// Should pg_ctl fail to stop it, the postmaster is killed (SIGKILL) so that
// no server outlives the test. Later calls return nil.
func (c *Cluster) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.StartTimeout)
	defer cancel()
	stopErr := c.stopLocked(ctx)
	if stopErr != nil {
		c.killPostmaster()
	}
	if err := os.RemoveAll(c.dir); err != nil {
		return errors.Join(stopErr, fmt.Errorf("pgcluster: removing %s: %w", c.dir, err))
	}
	return stopErr
}

// killPostmaster is Close's last resort: SIGKILL the pid in postmaster.pid.
// Its children notice the postmaster's death and exit by themselves.
func (c *Cluster) killPostmaster() {
	if pid, err := c.postmasterPID(); err == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
