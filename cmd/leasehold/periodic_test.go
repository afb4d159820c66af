package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPeriodicShowsTicksAndRefusesABadCron(t *testing.T) {
	t.Parallel()
	out, code := cli(t, "periodic", "--name", "nightly", "--cron", "0 3 * * *", "--from", "2026-12-02T10:00:00Z", "--count", "2")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "latest tick   2026-12-02T03:00:00Z  periodic:nightly:2026-12-02T03:00:00.000000Z")
	require.Contains(t, out, "next          2026-12-04T03:00:00Z  periodic:nightly:2026-12-04T03:00:00.000000Z")
	out, code = cli(t, "periodic", "--every", "90m", "--from", "2026-12-02T10:00:00Z", "--count", "1")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "next          2026-12-02T10:30:00Z")
	out, code = cli(t, "periodic", "--cron", "0 25 * * *")
	require.Equal(t, exitUsage, code, "a cron that does not parse is refused input (ErrInvalid)")
	require.True(t, strings.Contains(out, "periodic.cron") && strings.Contains(out, `"0 25 * * *" does not parse`), out)
}
