package main

import (
	"context"
	"math"
	"time"
)

// system is one job system under test.
type system interface {
	Name() string
	// Measure opens the system on t, migrates it, runs shape with n runs at
	// set and returns the timing and the settings its connections run with.
	// It returns after the system has stopped and closed its connections.
	Measure(ctx context.Context, cfg config, set setting, t target, shape string, n int) (measurement, error)
	// CompletedQuery counts the system's completed rows.
	CompletedQuery() string
}

// timing is what one shape measured. The timed interval runs from the
// return of the system's Start to the return of its Stop: Start is a
// once-per-process cost, not throughput — Leasehold's, in write-behind mode,
// samples the store clock for 250ms by design (WorkerConfig.ClockCheck),
// which alone would be a quarter of a 20,000-run drain — so it is printed
// beside, not counted, for both systems alike. Stop is counted: it flushes
// the last completions, without which the runs are not done.
type timing struct {
	Start   time.Duration // the system's Start call, outside Elapsed
	Elapsed time.Duration // Start's return → Stop's return
	Stop    time.Duration // the part of Elapsed after the n-th handler call: stopping and the final completion flush
	CPU     time.Duration // this process's CPU over Elapsed (cpu.go)
	// ServerCPU is the Postgres backends' CPU over Elapsed (cpu.go);
	// ServerCPUOK is false where it could not be read.
	ServerCPU   time.Duration
	ServerCPUOK bool
}

// measured is the timing of an interval from begun to its end, with the
// CPU its cpuMeter counted.
func measured(called, begun, stopping, end time.Time, client, server time.Duration, serverOK bool) timing {
	return timing{Start: begun.Sub(called), Elapsed: end.Sub(begun), Stop: end.Sub(stopping),
		CPU: client, ServerCPU: server, ServerCPUOK: serverOK}
}

// measurement is one shape on one system on one fresh store.
type measurement struct {
	timing
	Runs      int
	Completed int64             // completed rows counted after stop
	Settings  map[string]string // durability settings of the system's connections
}

// PerSecond is the completed-run rate.
func (m measurement) PerSecond() float64 { return float64(m.Runs) / m.Elapsed.Seconds() }

// CPUPerRun is the client's CPU µs per run over the timed interval.
func (m measurement) CPUPerRun() float64 { return float64(m.CPU.Microseconds()) / float64(m.Runs) }

// ServerCPUPerRun is the Postgres backends' CPU µs per run, NaN where it
// could not be read or there is no server (SQLite).
func (m measurement) ServerCPUPerRun() float64 {
	if !m.ServerCPUOK {
		return math.NaN()
	}
	return float64(m.ServerCPU.Microseconds()) / float64(m.Runs)
}
