package postgres

import (
	"testing"

	"github.com/leasehold/leasehold/driver/drivertest"
)

// TestRunEnqueueBatchOrderOnTheRealClock is the conformance case
// RunEnqueueBatchKeepsEveryColumnInInputOrder on the store's real clock
// (clock_timestamp(), read once per statement), which the suite's fake
// StoreClock does not exercise.
func TestRunEnqueueBatchOrderOnTheRealClock(t *testing.T) {
	t.Parallel()
	drivertest.EnqueueInInputOrder(t, open(t, Config{}))
}
