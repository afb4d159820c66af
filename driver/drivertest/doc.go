// Package drivertest is the one conformance suite every driver runs, case
// for case: each behaviour a driver must have is a case in Cases, and each
// driver's tests call Exercise with a Harness factory. Adding a behaviour to
// a driver means adding its case here, so the drivers cannot drift apart.
// The drivers' benchmarks live here too (bench.go), one implementation that
// each driver's BenchmarkX calls, so the stores are measured on the same
// work.
//
// It depends on package driver and the pure core (journal, runs, lease)
// only, never on the layers above (world, scheduler): what the world
// package builds on a driver — the expiry sweep's loop, say — is tested in
// that package, on both drivers.
package drivertest
