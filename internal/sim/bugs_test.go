//go:build simbugs

package sim_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/bugs"
	"github.com/leasehold/leasehold/internal/sim"
)

// TestPlantedBugsAreCaught breaks one rule at a time (build with -tags
// simbugs) and requires the simulator to find a violation within 1,000
// seeds — so the invariants are shown to bite, not merely to pass.
func TestPlantedBugsAreCaught(t *testing.T) {
	for _, c := range []struct {
		name, flag string
		set        *bool
	}{
		{"complete without the fence check", "complete-fence", &bugs.SkipCompleteFence},
		{"no side-effect gate", "gate", &bugs.SkipGate},
		{"drain revives an expired or lost lease", "revive", &bugs.DrainRevives},
		{"runway from the answer, not the send", "runway-answer", &bugs.RunwayFromAnswer},
		{"world holder: runway from the answer, not the send", "holder-runway-answer", &bugs.HolderRunwayFromAnswer},
		{"host appends before its mirror replays through its grant", "host-skips-replay", &bugs.HostSkipsReplay},
		{"host applies a command twice across a handoff (its mirror forgets keys at acquire)", "mirror-forgets-keys", &bugs.MirrorForgetsKeys},
		{"hot-world band hands off without journaling the transition", "band-skips-note", &bugs.BandSkipsNote},
	} {
		t.Run(c.name, func(t *testing.T) {
			*c.set = true
			defer func() { *c.set = false }()
			start := time.Now()
			for seed := uint64(1); seed <= 1000; seed++ {
				r, err := sim.Run(context.Background(), seed, sim.Options{})
				require.NoError(t, err)
				if !r.OK() {
					t.Logf("caught at seed %d of 1000 (%v): %s\n  replay: go run -tags simbugs ./cmd/leasehold sim --bug %s --seeds 1 --from %d --verbose",
						seed, time.Since(start).Round(time.Millisecond), r.Violations[0], c.flag, seed)
					return
				}
			}
			t.Fatalf("not caught within 1000 seeds")
		})
	}
}

// TestOneSeedWithBug replays LEASEHOLD_SIM_SEED with the planted bug named
// by LEASEHOLD_SIM_BUG (complete-fence, gate, revive, runway-answer,
// holder-runway-answer, host-skips-replay, mirror-forgets-keys, band-skips-note).
func TestOneSeedWithBug(t *testing.T) {
	seed, bug := os.Getenv("LEASEHOLD_SIM_SEED"), os.Getenv("LEASEHOLD_SIM_BUG")
	if seed == "" || bug == "" {
		t.Skip("set LEASEHOLD_SIM_SEED and LEASEHOLD_SIM_BUG")
	}
	sw := map[string]*bool{"complete-fence": &bugs.SkipCompleteFence, "gate": &bugs.SkipGate,
		"revive": &bugs.DrainRevives, "runway-answer": &bugs.RunwayFromAnswer, "holder-runway-answer": &bugs.HolderRunwayFromAnswer,
		"host-skips-replay": &bugs.HostSkipsReplay, "mirror-forgets-keys": &bugs.MirrorForgetsKeys,
		"band-skips-note": &bugs.BandSkipsNote}[bug]
	require.NotNil(t, sw, "unknown bug %q", bug)
	*sw = true
	defer func() { *sw = false }()
	n, err := strconv.ParseUint(seed, 10, 64)
	require.NoError(t, err)
	r, err := sim.Run(context.Background(), n, sim.Options{Verbose: true})
	require.NoError(t, err)
	t.Logf("knobs: %s\ntrace:\n%s", r.Knobs, joinLines(r.Trace))
	require.False(t, r.OK(), "the planted bug was not caught at this seed")
	t.Logf("caught: %s", r.Violations[0])
}
