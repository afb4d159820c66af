//go:build race

package scheduler_test

// raceEnabled shrinks the load test under the race detector, which slows
// it tenfold; the full size runs without it (make test-load, CI).
const raceEnabled = true
