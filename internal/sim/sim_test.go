package sim_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/sim"
)

func seedsFromEnv(def int) int {
	if v, err := strconv.Atoi(os.Getenv("LEASEHOLD_SIM_SEEDS")); err == nil && v > 0 {
		return v
	}
	return def
}

// TestSeeds runs a fixed block of seeds; every invariant must hold on
// each. LEASEHOLD_SIM_SEEDS changes the block's size.
func TestSeeds(t *testing.T) {
	n := seedsFromEnv(defaultSeeds)
	start := time.Now()
	var steps, late, appends, sweeps int
	var hostSeeds, hostSteps, commands, resent, handoffs, payouts, refused, reconciled, signed, hostCrashes, snapsPut, snapsGot, bandMoves int
	var snapsRestored, snapsIgnored int64
	var virt time.Duration
	for seed := uint64(1); seed <= uint64(n); seed++ {
		r, err := sim.Run(context.Background(), seed, sim.Options{})
		require.NoError(t, err, "seed %d", seed)
		if r.Host {
			hostSeeds++
			hostSteps += r.Steps
			commands += r.Commands
			resent += r.Resent
			handoffs += r.Handoffs
			payouts += r.Payouts
			refused += r.PayoutsRefused
			reconciled += r.Reconciled
			signed += r.Signed
			snapsPut += r.SnapshotsPut
			snapsGot += r.SnapshotsGot
			snapsRestored += r.SnapshotsRestored
			snapsIgnored += r.SnapshotsIgnored
			bandMoves += r.BandMoves
			hostCrashes += r.Crashes
		}
		if testing.Verbose() && n <= 20 && r.Host {
			t.Logf("seed %d (host): %d commands acknowledged (%d sent again), %d handoffs, %d payouts (%d refused by the witness), %d crashes, %d steps, %v virtual",
				seed, r.Commands, r.Resent, r.Handoffs, r.Payouts, r.PayoutsRefused, r.Crashes, r.Steps, r.Virtual.Round(time.Second))
		}
		if testing.Verbose() && n <= 20 {
			t.Logf("seed %d: %d completed, %d failed, %d invocations (%d refused by the witness), %d uncertain, %d reclaims, %d crashes, %d partitions, %d events, %d steps, %v virtual; %s",
				seed, r.Completed, r.Failed, r.Invocations, r.RefusedByWitness, r.Uncertain, r.Reclaims, r.Crashes, r.Partitions, r.Events, r.Steps, r.Virtual.Round(time.Second), r.Knobs)
		}
		steps += r.Steps
		late += r.LateRenewals
		appends += r.Appends
		sweeps += r.Sweeps
		virt += r.Virtual
		if !r.OK() {
			t.Fatalf("seed %d: %v\nknobs: %s\nreplay: %s\ntrace:\n%s", seed, r.Violations[0], r.Knobs, sim.Replay(seed), joinLines(r.Trace))
		}
	}
	t.Logf("%d seeds, %d events, %v of virtual time, in %v; %d renewals reached the store after their lease expired (refused); worlds: %d appends acknowledged, %d expiry sweeps",
		n, steps, virt.Round(time.Second), time.Since(start).Round(time.Millisecond), late, appends, sweeps)
	t.Logf("host mode: %d seeds, %d events, %d commands acknowledged (%d acknowledged ones sent again), %d handoffs, %d payouts (%d refused by the witness, %d uncertain ones reconciled), %d crashes; %d signed journal entries audited; %d snapshots stored, %d found by empty mirrors (%d restored, %d not trusted); %d band moves, each after its journaled transition; 0 violations",
		hostSeeds, hostSteps, commands, resent, handoffs, payouts, refused, reconciled, hostCrashes, signed, snapsPut, snapsGot, snapsRestored, snapsIgnored, bandMoves)
}

func joinLines(ls []string) string {
	out := ""
	for _, l := range ls {
		out += "  " + l + "\n"
	}
	return out
}
