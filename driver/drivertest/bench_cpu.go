package drivertest

import (
	"syscall"
	"time"
)

// processCPU is this process's user+system CPU time. A benchmark reports
// it per row beside the rate: on a machine shared with other work the
// wall-clock rate moves with the load, the CPU spent per row much less
// (for SQLite, in process, it is the store's work too).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
