//go:build race

package sqlite_test

// raceEnabled: the race detector instruments the SQLite engine's Go code
// (modernc), which slows a test that drives tens of thousands of rows
// through it about tenfold. Such a test counts pages, not goroutines, so
// it runs without the detector (make test-norace, in CI) and skips under
// it; the driver's concurrent code is raced by every other test here.
const raceEnabled = true
