//go:build simbugs

package failover

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/bugs"
)

// The planted-bug tests show the failover checks can fail: with the
// Postgres driver's fence floor removed (bugs.NoFenceFloor, a -tags simbugs
// build only), a standby promoted after a lossy window hands the window's
// fences out again, and the checks that pass with the floor catch it.
//
//	go test -tags simbugs -run 'WithoutFloor' -v ./internal/failover
//
// They set a package-level switch, so they are not parallel: Go runs them
// before any parallel test of the package starts.

// TestFencesAfterALossyPromotionWithoutFloor: the claims, reclaims and
// cancels after the promotion reissue the lost window's fences.
func TestFencesAfterALossyPromotionWithoutFloor(t *testing.T) {
	plantNoFenceFloor(t)
	h := lossyPromotionFences(t)
	t.Logf("without the floor: fences and epochs before the promotion %v (lost with the window %v); after it %v; reissued: %v",
		h.before, h.lost, h.after, h.reissued())
	require.NotEmpty(t, h.reissued(), "without the floor no fence was issued twice: the test cannot see the bug")
}

// TestAsynchronousStandbyFailoverWithoutFloor: the asynchronous failover
// finds fences handed out to two claims.
func TestAsynchronousStandbyFailoverWithoutFloor(t *testing.T) {
	plantNoFenceFloor(t)
	f := asynchronousFailover(t)
	require.Positive(t, f.reissued, "without the floor no fence was handed out twice: the test cannot see the bug")
}

// plantNoFenceFloor plants the bug until the test and all its cleanups
// have ended: registered first, its cleanup runs last, after the client
// and its reclaimer, which read the switch, are closed.
func plantNoFenceFloor(t *testing.T) {
	bugs.NoFenceFloor = true
	t.Cleanup(func() { bugs.NoFenceFloor = false })
}
