package server

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDashboardAlertsFromFigures: the health page's alerts are drawn from
// its figures — a clock alarm in force, alarms raised since start, a
// worker's clock cut, a saturated pool and given-up acquires — and a
// quiet server has none.
func TestDashboardAlertsFromFigures(t *testing.T) {
	require.Empty(t, alerts(&healthResponse{Pools: []poolHealth{{Name: "general", Max: 10, InUse: 3}}}))
	h := &healthResponse{
		Clock:   clockHealth{Alarm: true, RunwayCutMS: 1500, Steps: 1, Clears: 0},
		Workers: []workerHealth{{Worker: "w1", ClockCutMS: 250}, {Worker: "w2"}},
		Pools:   []poolHealth{{Name: "critical", Max: 4, InUse: 4}, {Name: "general", Max: 10, InUse: 2, Cancelled: 3}},
	}
	got := alerts(h)
	var what []string
	for _, a := range got {
		what = append(what, a.Level+" "+a.What)
	}
	require.Equal(t, []string{"alarm store clock", "warn store clock", "alarm worker w1", "alarm pool critical", "warn pool general"}, what)
	require.Contains(t, got[0].Detail, "1.5s")
	require.Contains(t, got[1].Detail, "1 step and 0 drift alarms")
	require.Contains(t, got[3].Detail, "all 4 connections in use")
}
