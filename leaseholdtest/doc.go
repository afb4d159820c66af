// Package leaseholdtest helps test code that uses Leasehold, as River's
// rivertest does for River: assert that a run was enqueued — by queue,
// payload fields, state, priority or unique key, also inside the caller's
// own uncommitted transaction (RequireEnqueued, RequireEnqueuedTx,
// RequireNotEnqueued) — work one run synchronously with a handler under a
// fake clock (Work), and put a run's effects in the *uncertain* state a
// crashed attempt leaves behind, to test reconciliation code
// (EnqueueUncertain).
//
// Everything runs against a real store — an SQLite file in t.TempDir() is
// enough — through the same paths production takes: Work drives the
// worker's own claim, lease, heartbeat and fenced final write.
package leaseholdtest

// T is what the helpers need of a test: *testing.T and *testing.B have it.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	FailNow()
}
