package worldfault

import (
	"os"
	"testing"
)

// TestMain runs a host process when the parent re-executed this binary
// with hostEnv set, and the tests otherwise.
func TestMain(m *testing.M) {
	if cfg := os.Getenv(hostEnv); cfg != "" {
		os.Exit(runHostProcess(cfg))
	}
	os.Exit(m.Run())
}
