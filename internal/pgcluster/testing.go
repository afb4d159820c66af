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
	c, err := New(context.Background(), cfg)
	return startForTest(t, c, err)
}

// StartStandby creates a streaming standby of primary (NewStandby) for the
// test, starts it and closes it when the test ends, as StartConfig does.
func StartStandby(t testing.TB, primary *Cluster, name string, cfg Config) *Cluster {
	t.Helper()
	c, err := NewStandby(context.Background(), primary, name, cfg)
	return startForTest(t, c, err)
}

// startForTest skips (or, with CI=true, fails) without the binaries,
// registers the cleanup and starts c.
func startForTest(t testing.TB, c *Cluster, err error) *Cluster {
	t.Helper()
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
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}
