package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// cpuMeter counts the CPU of one measurement's timed interval: unlike its
// wall time, the load of other processes does not bend it.
//
// client is this process's user+system CPU (getrusage). Only one system
// runs in the process at a time, so over the interval it is that system's
// client side — and on SQLite, whose engine runs in the process, the whole
// system's.
//
// server is, on Postgres, the CPU of the backends serving the system's
// connections: each system connects with application_name set to the
// measurement's schema (target.url); the meter finds their pids in
// pg_stat_activity and reads each one's time on CPU (/proc/<pid>/schedstat,
// ns) at the start, every pollEvery while the system runs, and at the end.
// A backend that exits inside the interval (River's clients close and open
// connections as they work) counts up to its last poll, so the figure can
// fall short by at most pollEvery of CPU per exiting backend. It needs the
// server on this machine and /proc readable, else it is not given (n/a).
type cpuMeter struct {
	admin *pgx.Conn // nil: no server to read (SQLite)
	app   string

	client0 time.Duration
	base    map[int]time.Duration // pid → CPU at the start (0 for backends born later)
	seen    map[int]time.Duration // pid → CPU at its last reading
	ok      bool
	stop    chan struct{}
	done    chan struct{}
}

const pollEvery = 25 * time.Millisecond

// meter returns the cpuMeter of t's measurement.
func (t target) meter() *cpuMeter { return &cpuMeter{admin: t.admin, app: t.Schema} }

// begin starts the interval.
func (m *cpuMeter) begin(ctx context.Context) {
	m.client0 = processCPU()
	if m.admin == nil {
		return
	}
	m.base, m.ok = m.read(ctx)
	m.seen = map[int]time.Duration{}
	for pid, c := range m.base {
		m.seen[pid] = c
	}
	m.stop, m.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(m.done)
		tick := time.NewTicker(pollEvery)
		defer tick.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				m.merge(ctx)
			}
		}
	}()
}

// end ends the interval and returns the client's and the server's CPU;
// serverOK is false where the server's could not be read.
func (m *cpuMeter) end(ctx context.Context) (client, server time.Duration, serverOK bool) {
	client = processCPU() - m.client0
	if m.admin == nil {
		return client, 0, false
	}
	close(m.stop)
	<-m.done // the admin connection is the poller's until here
	m.merge(ctx)
	for pid, c := range m.seen {
		server += c - m.base[pid]
	}
	return client, server, m.ok
}

func (m *cpuMeter) merge(ctx context.Context) {
	now, ok := m.read(ctx)
	m.ok = m.ok && ok
	for pid, c := range now {
		m.seen[pid] = c
	}
}

// read is the CPU so far of every backend named m.app.
func (m *cpuMeter) read(ctx context.Context) (map[int]time.Duration, bool) {
	rows, err := m.admin.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE application_name = $1", m.app)
	if err != nil {
		return nil, false
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, false
	}
	out := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		if c, found := schedCPU(pid); found {
			out[pid] = c
		} // else gone between the query and the read: it keeps its last reading
	}
	// None readable: the server is not on this machine (or /proc is closed).
	return out, len(pids) == 0 || len(out) > 0
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// schedCPU is process pid's time on CPU: the first field of
// /proc/<pid>/schedstat, in ns.
func schedCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0, false
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	return time.Duration(ns), err == nil
}
