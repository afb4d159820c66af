package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The CPU counters of a measurement: unlike its wall time, the load of
// other processes does not bend them.
//
// client is this process's user+system CPU (getrusage). Only one system
// runs in the process at a time, so over a timed interval it is that
// system's client side — and on SQLite, whose engine runs in the process,
// the whole system's.
//
// server is, on Postgres, the CPU of the backends serving the system's
// connections: each system connects with application_name set to the
// measurement's schema (target.url), and the meter sums utime+stime from
// /proc/<pid>/stat of the backends pg_stat_activity lists under that name.
// It needs the server on this machine and /proc readable (else 0, printed
// as n/a); a backend that exits inside the interval takes its CPU with it
// (the pools here keep theirs open until the system closes).
type cpuSample struct {
	client, server time.Duration
	serverOK       bool
}

// cpuMeter reads a cpuSample now.
type cpuMeter func() cpuSample

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// meter returns the cpuMeter of t's measurement.
func (t target) meter(ctx context.Context) cpuMeter {
	if t.admin == nil {
		return func() cpuSample { return cpuSample{client: processCPU()} }
	}
	return func() cpuSample {
		s := cpuSample{client: processCPU()}
		rows, err := t.admin.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE application_name = $1", t.Schema)
		if err != nil {
			return s
		}
		defer rows.Close()
		s.serverOK = true
		for rows.Next() {
			var pid int
			if rows.Scan(&pid) != nil {
				s.serverOK = false
				continue
			}
			d, ok := procCPU(pid)
			s.server += d
			s.serverOK = s.serverOK && ok
		}
		return s
	}
}

// clockTick is Linux's USER_HZ, the unit of /proc/<pid>/stat's CPU times.
const clockTick = 10 * time.Millisecond

// procCPU is utime+stime of process pid.
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name may hold spaces: fields count from after its ')'.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b)[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64) // field 14, utime
	st, err2 := strconv.ParseInt(f[12], 10, 64) // field 15, stime
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * clockTick, true
}
