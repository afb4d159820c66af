package server

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
)

// TestRunBodyCarriesSnoozesAndReclaimTime: a run's snooze count and the
// store time of its last reclaim (issue 16) reach the wire, and are
// absent while zero, as openapi.json documents them.
func TestRunBodyCarriesSnoozesAndReclaimTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 9, 0, 0, 123456000, time.UTC)
	b, err := json.Marshal(runOf(&driver.Run{ID: 1, Queue: "q", Snoozes: 2, ReclaimedAt: at}))
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	require.Equal(t, float64(2), got["snoozes"])
	require.Equal(t, "2026-12-01T09:00:00.123456Z", got["reclaimed_at"])

	b, err = json.Marshal(runOf(&driver.Run{ID: 1, Queue: "q"}))
	require.NoError(t, err)
	got = nil
	require.NoError(t, json.Unmarshal(b, &got))
	require.NotContains(t, got, "snoozes")
	require.NotContains(t, got, "reclaimed_at")
}
