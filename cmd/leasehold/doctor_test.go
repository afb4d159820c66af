package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDoctorOnSQLite(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lh.db")
	out, code := cli(t, "doctor", "--db", db, "--samples", "5", "--every", "2ms", "--timing", "worlds")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "store:      sqlite; sampling 5 probes 2ms apart; timing worlds (T_lease 30s, S 5s)")
	require.Contains(t, out, "offset:     ")
	require.Contains(t, out, "rate error: ")
	require.Contains(t, out, "store RTT:  min ")
	require.Contains(t, out, "write-behind: OK\n")
}

func TestDoctorRejectsBadFlags(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lh.db")
	for _, args := range [][]string{
		{"--samples", "1"},
		{"--every", "-1s"},
		{"--timing", "sometimes"},
	} {
		out, code := cli(t, append([]string{"doctor", "--db", db}, args...)...)
		require.Equal(t, exitUsage, code, out)
		require.Contains(t, out, "leasehold doctor: --", out)
	}
}
