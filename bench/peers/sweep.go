package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
)

// best is the setting each system is compared at: system → shape → setting.
type best map[string]map[string]setting

// onlySettings is the best when there is nothing to sweep (one setting per
// system), nil otherwise.
func onlySettings(cfg config) best {
	lh, rv := leaseholdSettings(cfg), riverSettings(cfg)
	if len(lh) != 1 || len(rv) != 1 {
		return nil
	}
	return best{
		"leasehold": {shapeDrain: lh[0], shapeMixed: lh[0]},
		"river":     {shapeDrain: rv[0], shapeMixed: rv[0]},
	}
}

// candidate is one system at one setting in the sweep, with its rates per
// shape, one per sweep round.
type candidate struct {
	sys   system
	set   setting
	rates map[string][]float64
}

// sweep measures every setting of both systems on store, both shapes, at
// the sweep sizes, cfg.SweepRounds times, and returns each system's setting
// with the highest median per shape, after printing a table of the medians.
//
// The order spreads the machine's drift over all settings alike: a round
// goes through every setting once (so a setting's measurements are taken
// at different times, not back to back), settings in order of worker
// count with the two systems interleaved, and every other round runs in
// reverse.
func sweep(ctx context.Context, cfg config, store string, out io.Writer) (best, error) {
	var cands []*candidate
	for _, s := range leaseholdSettings(cfg) {
		cands = append(cands, &candidate{sys: leaseholdSystem{}, set: s, rates: map[string][]float64{}})
	}
	for _, s := range riverSettings(cfg) {
		cands = append(cands, &candidate{sys: riverSystem{}, set: s, rates: map[string][]float64{}})
	}
	slices.SortStableFunc(cands, func(a, b *candidate) int { return cmp.Compare(a.set.Workers, b.set.Workers) })
	shapes := []struct {
		name string
		n    int
	}{{shapeDrain, cfg.SweepDrain}, {shapeMixed, cfg.SweepMixed}}

	fmt.Fprintf(out, "\n[%s] sweep: drain %d runs, mixed %d runs, %d round(s) over %d settings; load average %s\n",
		store, cfg.SweepDrain, cfg.SweepMixed, cfg.SweepRounds, len(cands), loadAverage())
	for round := range cfg.SweepRounds {
		order := slices.Clone(cands)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, c := range order {
			fmt.Fprintf(out, "  sweep %d  %-9s %-38s", round+1, c.sys.Name(), c.set.label(c.sys.Name()))
			for _, sh := range shapes {
				m, err := measure(ctx, cfg, store, c.sys, c.set, sh.name, sh.n)
				if err != nil {
					fmt.Fprintln(out, " failed")
					return nil, fmt.Errorf("sweep %s %s %s (%s): %w", store, c.sys.Name(), sh.name, c.set, err)
				}
				c.rates[sh.name] = append(c.rates[sh.name], m.PerSecond())
				fmt.Fprintf(out, "  %s %6.0f/s", sh.name, m.PerSecond())
			}
			fmt.Fprintln(out)
		}
	}

	chosen := best{"leasehold": {}, "river": {}}
	top := map[[2]string]float64{} // (system, shape) → best median
	fmt.Fprintf(out, "\n  [%s] sweep medians; load average %s\n", store, loadAverage())
	fmt.Fprintf(out, "  %-9s %-38s %14s %14s\n", "system", "setting", "drain runs/s", "mixed runs/s")
	for _, c := range cands {
		fmt.Fprintf(out, "  %-9s %-38s", c.sys.Name(), c.set.label(c.sys.Name()))
		for _, sh := range shapes {
			r := median(c.rates[sh.name])
			fmt.Fprintf(out, " %14.0f", r)
			if k := [2]string{c.sys.Name(), sh.name}; r > top[k] {
				top[k] = r
				chosen[c.sys.Name()][sh.name] = c.set
			}
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "  best on %s:\n", store)
	for _, sys := range []string{"leasehold", "river"} {
		for _, shape := range []string{shapeDrain, shapeMixed} {
			fmt.Fprintf(out, "    %-9s %-5s %-38s %8.0f runs/s\n", sys, shape, chosen[sys][shape].label(sys), top[[2]string{sys, shape}])
		}
	}
	return chosen, nil
}
