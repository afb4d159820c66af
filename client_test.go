package leasehold_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
)

// TestAuditWhileAppending: an audit of a live world never reports the head
// row out of step with the journal because of appends that commit during it.
func TestAuditWhileAppending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := openSQLite(t, leasehold.Config{})
	w, err := c.CreateWorld(ctx, "w", "home")
	require.NoError(t, err)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, err := c.Append(ctx, leasehold.AppendParams{World: "w", Holder: "home", Epoch: w.Epoch,
				SeenPosition: w.GrantedAt, Kind: "x", Payload: []byte(`{}`)})
			require.NoError(t, err)
		}
	})
	for range 30 {
		rep, err := c.Audit(ctx, "w")
		require.NoError(t, err)
		require.True(t, rep.OK(), "%v", rep.Violation)
	}
	close(stop)
	wg.Wait()
}
