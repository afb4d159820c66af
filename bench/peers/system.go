package main

import (
	"context"
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

// measurement is one shape on one system on one fresh store.
type measurement struct {
	Elapsed   time.Duration
	Stop      time.Duration // the part of Elapsed after the n-th handler call: stopping and the final completion flush
	Runs      int
	Completed int64             // completed rows counted after stop
	Settings  map[string]string // durability settings of the system's connections
}

// PerSecond is the completed-run rate.
func (m measurement) PerSecond() float64 { return float64(m.Runs) / m.Elapsed.Seconds() }
