package lease_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/lease"
)

func TestDurability(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d     lease.Durability
		name  string
		valid bool
	}{
		{0, "Durability(0)", false},
		{lease.SyncCritical, "sync_critical", true},
		{lease.DurableBatched, "durable_batched", true},
		{lease.LossTolerantCoalesced, "loss_tolerant_coalesced", true},
		{lease.LossTolerantCoalesced + 1, "Durability(4)", false},
		{255, "Durability(255)", false},
	}
	for _, tc := range tests {
		require.Equal(t, tc.name, tc.d.String())
		require.Equal(t, tc.valid, tc.d.Valid(), tc.name)
	}
	var zero lease.Durability
	require.False(t, zero.Valid(), "an unset class must be invalid")
}

type claimParams struct{}

func (claimParams) Class() lease.Durability { return lease.SyncCritical }

func TestClassed(t *testing.T) {
	t.Parallel()
	var c lease.Classed = claimParams{}
	require.Equal(t, lease.SyncCritical, c.Class())
}
