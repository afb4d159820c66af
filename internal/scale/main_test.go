package scale

import (
	"os"
	"testing"
)

// TestMain runs a Leasehold process's main when the binary was re-executed
// as one (procEnv set), and the tests otherwise.
func TestMain(m *testing.M) {
	if raw := os.Getenv(procEnv); raw != "" {
		os.Exit(runProcess(raw))
	}
	os.Exit(m.Run())
}
