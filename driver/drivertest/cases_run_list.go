package drivertest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// runListCase: RunList pages by id after the cursor, filters by queue and
// state, by owner (the runs it holds) and by unique key, and refuses a bad filter, cursor or page size typed.
var runListCase = Case{"RunListPagesByIDWithFilters", func(t *testing.T, f Factory) {
	e := newEnv(t, f)
	var ids []int64
	for _, q := range []string{"a", "b", "a", "a", "b"} {
		ids = append(ids, e.enqueue(runs.Enqueue{Queue: q})[0].Run.ID)
	}
	claimed := e.claim("b", "o", 1)
	require.Len(t, claimed, 1)
	list := func(p driver.RunListParams) []int64 {
		rs, err := e.d.RunList(e.ctx, &p)
		require.NoError(t, err)
		var out []int64
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	require.Equal(t, ids, list(driver.RunListParams{}))
	require.Equal(t, ids[:2], list(driver.RunListParams{Limit: 2}))
	require.Equal(t, ids[2:4], list(driver.RunListParams{AfterID: ids[1], Limit: 2}))
	require.Empty(t, list(driver.RunListParams{AfterID: ids[4]}))
	require.Equal(t, []int64{ids[0], ids[2], ids[3]}, list(driver.RunListParams{Queue: "a"}))
	require.Equal(t, []int64{claimed[0].ID}, list(driver.RunListParams{State: runs.StateRunning}))
	require.Equal(t, []int64{ids[4]}, list(driver.RunListParams{Queue: "b", State: runs.StateAvailable}))
	rs, err := e.d.RunList(e.ctx, &driver.RunListParams{State: runs.StateRunning})
	require.NoError(t, err)
	require.Equal(t, e.run(claimed[0].ID), rs[0], "a listed run is its row")

	// The owner filter is the runs the owner holds now; the unique key's
	// is the run that holds the key now.
	require.Equal(t, []int64{claimed[0].ID}, list(driver.RunListParams{Owner: "o"}))
	require.Empty(t, list(driver.RunListParams{Owner: "someone-else"}))
	require.Empty(t, list(driver.RunListParams{Owner: "o", Queue: "a"}))
	require.Empty(t, list(driver.RunListParams{Owner: "o", AfterID: claimed[0].ID}))
	keyed := e.enqueue(runs.Enqueue{Queue: "k", UniqueKey: "report-7", UniqueStates: []runs.State{runs.StateAvailable, runs.StateRunning, runs.StateBlocked}})[0].Run
	e.enqueue(runs.Enqueue{Queue: "k", UniqueKey: "report-8"})
	held := e.claim("k", "o2", 1)
	require.Len(t, held, 1)
	require.Equal(t, keyed.ID, held[0].ID)
	require.Equal(t, []int64{keyed.ID}, list(driver.RunListParams{UniqueKey: "report-7"}))
	require.Equal(t, []int64{keyed.ID}, list(driver.RunListParams{Owner: "o2", UniqueKey: "report-7"}))
	require.Empty(t, list(driver.RunListParams{UniqueKey: "report-7", State: runs.StateAvailable}))
	require.Empty(t, list(driver.RunListParams{UniqueKey: "nobody's"}))
	for _, bad := range []driver.RunListParams{{Queue: "a b"}, {State: "sleeping"}, {AfterID: -1}, {Limit: driver.MaxRunListLimit + 1},
		{Owner: "a b"}, {UniqueKey: strings.Repeat("k", runs.MaxUniqueKeyBytes+1)}} {
		_, err := e.d.RunList(e.ctx, &bad)
		require.ErrorIs(t, err, driver.ErrInvalid, "%+v", bad)
	}
}}
