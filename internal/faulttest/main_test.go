package faulttest

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs a worker process's main when the binary was re-executed as
// one (workerEnv set), and the tests otherwise — failing the package if a
// test leaves a goroutine behind (a proxy link, a pool, a reclaimer, a
// process waiter).
func TestMain(m *testing.M) {
	if raw := os.Getenv(workerEnv); raw != "" {
		os.Exit(runWorker(raw))
	}
	goleak.VerifyTestMain(m)
}
