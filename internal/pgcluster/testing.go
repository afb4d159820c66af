package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
)

// Start creates and starts a cluster for the test and closes it (stopping
// the server, removing its folder) when the test ends, printing the server
// log if the test failed. Without the binaries it skips the test loudly —
// or fails it when CI=true, so CI never passes by skipping.
func Start(t testing.TB) *Cluster {
	t.Helper()
	return StartConfig(t, Config{})
}

// StartConfig is Start with a Config.
func StartConfig(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	ctx := context.Background()
	c, err := New(ctx, cfg)
	if errors.Is(err, ErrNoBinaries) {
		msg := fmt.Sprintf("\n\n*** NO POSTGRESQL BINARIES: %v\n*** This test needs a throwaway cluster and did NOT run. Install PostgreSQL 15 or set %s.\n", err, BinDirEnv)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "*** CI=true: tests must run, never skip.")
		}
		t.Skip(msg)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pgcluster %s server log:\n%s", c.Addr(), c.ServerLog())
		}
		if err := c.Close(); err != nil {
			t.Errorf("pgcluster: %v", err)
		}
	})
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}
