package drivertest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// enqueueOrderCase: one batch mixing long key-free stretches (crossing any
// driver's chunk size), new unique keys, keys repeated within the batch and
// keys already taken. Results come back in input order, new runs get
// ascending ids in input order, and every run reads back as returned.
var enqueueOrderCase = Case{"RunEnqueueBatchKeepsInputOrder", func(t *testing.T, f Factory) {
	e := newEnv(t, f)
	taken := e.enqueue(runs.Enqueue{Queue: "q", UniqueKey: "taken"})[0].Run
	var batch []runs.Enqueue
	add := func(n int, key func(i int) string) {
		for i := range n {
			batch = append(batch, runs.Enqueue{Queue: "q", Payload: []byte(fmt.Sprint(len(batch))), UniqueKey: key(i)})
		}
	}
	none := func(int) string { return "" }
	add(250, none)
	add(3, func(i int) string { return fmt.Sprintf("k%d", i) })
	add(1, func(int) string { return "taken" })
	add(1, func(int) string { return "k1" })
	add(2100, none)
	add(2, none)
	out := e.enqueue(batch...)
	require.Len(t, out, len(batch))
	var last int64
	for i, r := range out {
		switch batch[i].UniqueKey {
		case "taken":
			require.True(t, r.Existing, "index %d", i)
			require.Equal(t, taken.ID, r.Run.ID)
			continue
		case "k1":
			if i == 254 {
				require.True(t, r.Existing, "a key repeated within the batch")
				require.Equal(t, out[251].Run.ID, r.Run.ID)
				continue
			}
		}
		require.False(t, r.Existing, "index %d", i)
		require.Greater(t, r.Run.ID, last, "ids ascend in input order (index %d)", i)
		last = r.Run.ID
		require.Equal(t, fmt.Sprint(i), string(r.Run.Payload), "index %d", i)
		if i%97 == 0 || i == len(out)-1 {
			got, err := e.runStore().RunGet(e.ctx, &driver.RunGetParams{ID: r.Run.ID})
			require.NoError(t, err)
			require.Equal(t, r.Run, got, "index %d reads back as returned", i)
		}
	}
}}
