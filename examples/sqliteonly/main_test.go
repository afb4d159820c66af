package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRun: the example works its run to completion on a fresh file.
// (That it links no pgx is internal/layers' check.)
func TestRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, filepath.Join(t.TempDir(), "x.db"), &out))
	require.Contains(t, out.String(), "hello, ada (idempotency key 1:greet, fence 1)")
	require.Contains(t, out.String(), "run 1: completed after 1 attempt(s)")
}
