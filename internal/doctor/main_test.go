package doctor_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine running (a Sample
// never finished, a driver's pool not closed).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
