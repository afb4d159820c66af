package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestSmoke runs the command end to end at 1,000 runs per measurement on
// SQLite and Postgres — a two-setting River sweep, then one side-by-side
// round — so the peer comparison keeps building and working (`make
// peers-smoke`, run by CI). Outside CI without Postgres it runs SQLite alone. Every measurement counts its completed rows and
// fails the command unless all 1,000 completed; the test checks that each
// side-by-side measurement reported so on both stores. With CI=true an
// unreachable Postgres fails the test instead of skipping it.
func TestSmoke(t *testing.T) {
	url := smokePostgresURL(t)
	stores := []string{storeSQLite, storePostgres}
	if url == "none" {
		stores = stores[:1]
	}
	var out bytes.Buffer
	args := []string{
		"--postgres", url, "--sqlite-dir", t.TempDir(),
		"--drain", "1000", "--mixed", "1000", "--rounds", "1", "--timeout", "2m",
		"--leasehold-concurrency", "200", "--river-max-workers", "200",
		"--river-fetch-cooldown", "1ms,5ms", "--river-fetch-poll-interval", "5ms",
	}
	err := run(context.Background(), args, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, store := range stores {
		_, side, ok := strings.Cut(out.String(), "["+store+"] side by side")
		if !ok {
			t.Fatalf("no side-by-side section for %s", store)
		}
		side, _, _ = strings.Cut(side, "\n[") // up to the next store's section
		side, _, _ = strings.Cut(side, "\n==")
		if got := strings.Count(side, " runs ... "); got != 4 {
			t.Errorf("%s: %d side-by-side measurements, want 4 (2 systems x 2 shapes)", store, got)
		}
		if got := strings.Count(side, "; 1000 completed rows)"); got != 4 {
			t.Errorf("%s: %d measurements with all 1000 runs completed, want 4", store, got)
		}
	}
}

// smokePostgresURL is the test Postgres (LEASEHOLD_TEST_DATABASE_URL, else
// the local default), probed once. Without it the smoke runs SQLite alone
// and says so loudly; under CI=true it fails instead, as the main module's
// internal/testdb does.
func smokePostgresURL(t *testing.T) string {
	url := os.Getenv("LEASEHOLD_TEST_DATABASE_URL")
	if url == "" {
		url = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err == nil {
		err = conn.Ping(ctx)
		conn.Close(ctx)
	}
	if err != nil {
		msg := "POSTGRES NOT REACHABLE at " + url + ": " + err.Error() + " — the Postgres half of the smoke did NOT run"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (CI=true: it must run, never skip)")
		}
		t.Log("\n\n*** " + msg + "\n")
		return "none"
	}
	return url
}
