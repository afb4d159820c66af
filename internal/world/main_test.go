package world_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine running
// (committers, sweepers, pool workers of a driver not closed).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
