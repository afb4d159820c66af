// Package testdb gives tests a real Postgres: a fresh schema per test on the
// server named by LEASEHOLD_TEST_DATABASE_URL (default: the local server at
// 127.0.0.1:5432, database test). Outside CI, a test skips loudly when no
// server answers; with CI=true it fails instead, so CI never passes by
// skipping the Postgres half of the suite.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultURL is used when LEASEHOLD_TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var (
	probeOnce sync.Once
	probeErr  error
)

// URL returns the Postgres test URL, skipping (or failing, in CI) the test
// when the server does not answer.
func URL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("LEASEHOLD_TEST_DATABASE_URL")
	if url == "" {
		url = DefaultURL
	}
	probeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			probeErr = err
			return
		}
		probeErr = conn.Ping(ctx)
		conn.Close(ctx)
	})
	if probeErr != nil {
		msg := fmt.Sprintf("\n\n*** POSTGRES NOT REACHABLE at %s: %v\n*** The Postgres half of this test did NOT run. Start Postgres or set LEASEHOLD_TEST_DATABASE_URL.\n", url, probeErr)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "*** CI=true: Postgres tests must run, never skip.")
		}
		t.Skip(msg)
	}
	return url
}

// Schema creates a fresh schema for the test and drops it when the test
// ends. It returns the URL and the schema name.
func Schema(t testing.TB) (url, schema string) {
	t.Helper()
	url = URL(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema = "lh_test_" + hex.EncodeToString(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("testdb: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("testdb: create schema: %v", err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Errorf("testdb: drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("testdb: drop schema %s: %v", schema, err)
		}
	})
	return url, schema
}
