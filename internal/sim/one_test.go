package sim_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/sim"
)

// TestOneSeed replays LEASEHOLD_SIM_SEED with its trace (skipped when unset).
func TestOneSeed(t *testing.T) {
	v := os.Getenv("LEASEHOLD_SIM_SEED")
	if v == "" {
		t.Skip("set LEASEHOLD_SIM_SEED to replay one seed")
	}
	seed, err := strconv.ParseUint(v, 10, 64)
	require.NoError(t, err)
	r, err := sim.Run(context.Background(), seed, sim.Options{Verbose: true})
	require.NoError(t, err)
	t.Logf("knobs: %s", r.Knobs)
	t.Logf("trace:\n%s", joinLines(r.Trace))
	for _, v := range r.Violations {
		t.Errorf("%s", v)
	}
}
