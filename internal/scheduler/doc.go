// Package scheduler is the I/O side of runs around the pure core in package
// runs: services that carry the run rules out over a driver.RunStore. So far
// the Reclaimer; the worker, effects, transactional effects and the event
// committer join it.
package scheduler
