package host_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a world loop or a driver's
// pool running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
