package faultproxy_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine running: a pipe
// still holding a chunk, an accept loop not stopped, an echo handler.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
