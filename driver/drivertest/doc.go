// Package drivertest is the one conformance suite every driver runs, case
// for case: each behaviour a driver must have is a case in Cases, and each
// driver's tests call Exercise with a Harness factory. Adding a behaviour to
// a driver means adding its case here, so the drivers cannot drift apart.
// The drivers' benchmarks live here too (bench.go), one implementation that
// each driver's BenchmarkX calls, so the stores are measured on the same
// work.
//
// SPEC §5's bad-input contract is one case, HostileInputContract
// (cases_hostile.go, hostile_*.go): the corpus of internal/hostile is
// driven into every entry point that takes a value of its kind, and each
// call must be refused with an error matching one exported sentinel and
// no row changed (a store fingerprint before and after), or accepted and
// read back byte-identical, with every world surviving export → audit →
// import. Hostile returns the outcome of each call, so a test holding both
// stores can require they agree (crossstore_test.go).
//
// It depends on package driver and the pure core (journal, runs, lease)
// only, never on the layers above (world, scheduler): what the world
// package builds on a driver — the expiry sweep's loop, say — is tested in
// that package, on both drivers.
package drivertest
