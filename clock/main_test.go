package clock_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Fake timers fire on the caller's goroutine, so a leaked goroutine here
// means a test's background loop never saw its timer fire.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
