package drivertest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

var propertyCases = []Case{
	{"RandomizedFoldAgreesWithStore", func(t *testing.T, f Factory) {
		seeds := []uint64{1, 2, 3}
		if s := os.Getenv("LEASEHOLD_PROPERTY_SEED"); s != "" {
			n, err := strconv.ParseUint(s, 10, 64)
			require.NoError(t, err)
			seeds = []uint64{n}
		}
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Logf("replay with LEASEHOLD_PROPERTY_SEED=%d", seed)
				runProperty(t, newEnv(t, f), seed, 120)
			})
		}
	}},
}

// runProperty drives random grant/renew/revoke/handoff/append/sweep/clock
// steps against the store and, before each, predicts the outcome with the
// pure planner on the fold of the journal so far. After every step the
// store's new entries must be exactly the predicted ones (same hashes), its
// refusals the predicted refusals, and its head row the fold — so the fold
// and the store's enforcement agree at every position.
func runProperty(t *testing.T, e *env, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	holders := []string{"home", "a", "b"}
	pick := func() string { return holders[rng.IntN(len(holders))] }
	e.create("w", "home")
	model := e.audit("w").Final
	rejected := map[string]bool{}
	for step := range steps {
		now := e.h.Clock.Now()
		epoch := model.Epoch - int64(rng.IntN(4)/3) // mostly current, sometimes stale
		var predicted journal.Plan
		var predErr, gotErr error
		var op string
		plan := func(fn func(s journal.State, now time.Time) (journal.Plan, error)) {
			predicted, predErr = fn(model, now)
			_, gotErr = e.change("w", op, fn)
		}
		switch k := rng.IntN(12); {
		case k == 0:
			op = "clock"
			e.h.Clock.Advance(time.Duration(rng.Int64N(int64(term * 6 / 5))))
		case k == 1:
			op = "renew"
			h := pick()
			plan(func(s journal.State, now time.Time) (journal.Plan, error) {
				return journal.PlanRenew(s, now, h, epoch, term)
			})
		case k == 2:
			op = "revoke"
			plan(func(s journal.State, now time.Time) (journal.Plan, error) {
				return journal.PlanRevoke(s, now, epoch, "ops")
			})
		case k == 3:
			op = "grant"
			h := pick()
			plan(func(s journal.State, now time.Time) (journal.Plan, error) {
				return journal.PlanGrant(s, now, h, epoch, term)
			})
		case k == 4:
			op = "handoff"
			from, to := pick(), pick()
			plan(func(s journal.State, now time.Time) (journal.Plan, error) {
				return journal.PlanHandoff(s, now, from, to, epoch, term)
			})
		case k == 5:
			op = "sweep"
			var ok bool
			predicted, ok = journal.PlanSweep(model, now, "home", term)
			swept, err := e.sweep1("w")
			require.NoError(t, err)
			require.Equal(t, ok, swept, "step %d: sweep", step)
		default:
			op = "append"
			reqs := make([]journal.AppendRequest, 1+rng.IntN(3))
			for i := range reqs {
				h := pick()
				if rng.IntN(3) > 0 {
					h = model.Holder
				}
				reqs[i] = journal.AppendRequest{Holder: h, Epoch: epoch, SeenPosition: model.GrantedAt - int64(rng.IntN(5)/4),
					Kind: "data", Payload: []byte(strconv.Itoa(step))}
			}
			if model.Holder == "" {
				for i := range reqs {
					reqs[i].Holder = pick()
				}
			}
			pred := append([]journal.AppendRequest(nil), reqs...)
			var predOut []journal.AppendOutcome
			predicted, predOut = journal.PlanAppend(model, now, pred, func(h string) bool { return rejected[h] })
			out, err := e.d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: "w", Requests: reqs})
			require.NoError(t, err)
			for i := range out {
				require.Equal(t, predOut[i].Position, out[i].Position, "step %d request %d", step, i)
				require.Equal(t, fmt.Sprint(predOut[i].Err), fmt.Sprint(out[i].Err), "step %d request %d", step, i)
			}
		}
		if op != "clock" && op != "sweep" && op != "append" {
			require.Equal(t, fmt.Sprint(predErr), fmt.Sprint(unwrapPlanner(gotErr)), "step %d %s", step, op)
		}
		stored := e.read("w")
		got := stored[model.Position:]
		require.Len(t, got, len(predicted.Entries), "step %d %s: entries written", step, op)
		for i := range got {
			require.Equal(t, predicted.Entries[i].Hash, got[i].Hash, "step %d %s: entry %d", step, op, got[i].Position)
		}
		rep := e.audit("w") // every prefix folds, and the head row is the fold
		if rep.Final.Epoch != model.Epoch {
			rejected = map[string]bool{}
		}
		for _, h := range predicted.Rejected {
			rejected[h] = true
		}
		model = rep.Final
	}
	t.Logf("seed %d: %d steps, final %s", seed, steps, model)
}

// unwrapPlanner returns a planner's own error as the driver passed it on.
func unwrapPlanner(err error) error { return err }
