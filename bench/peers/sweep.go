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

// candidate is one system at one setting in the sweep.
type candidate struct {
	sys system
	set setting
}

// sweep measures every setting of both systems on store, both shapes, at
// the sweep sizes, prints a row per setting and returns each system's
// fastest setting per shape. Settings run in order of worker count, the two
// systems interleaved, so a drift of the machine's load over the sweep
// bends both alike rather than one system's whole grid.
func sweep(ctx context.Context, cfg config, store string, out io.Writer) (best, error) {
	var cands []candidate
	for _, s := range leaseholdSettings(cfg) {
		cands = append(cands, candidate{leaseholdSystem{}, s})
	}
	for _, s := range riverSettings(cfg) {
		cands = append(cands, candidate{riverSystem{}, s})
	}
	slices.SortStableFunc(cands, func(a, b candidate) int { return cmp.Compare(a.set.Workers, b.set.Workers) })

	fmt.Fprintf(out, "\n[%s] sweep: drain %d runs, mixed %d runs, %d measurement(s) per setting (median kept); load average %s\n",
		store, cfg.SweepDrain, cfg.SweepMixed, cfg.SweepRounds, loadAverage())
	fmt.Fprintf(out, "  %-9s %-38s %14s %14s\n", "system", "setting", "drain runs/s", "mixed runs/s")
	chosen := best{"leasehold": {}, "river": {}}
	top := map[[2]string]float64{} // (system, shape) → best rate so far
	for _, c := range cands {
		fmt.Fprintf(out, "  %-9s %-38s", c.sys.Name(), c.set.label(c.sys.Name()))
		for _, sh := range []struct {
			name string
			n    int
		}{{shapeDrain, cfg.SweepDrain}, {shapeMixed, cfg.SweepMixed}} {
			rates := make([]float64, 0, cfg.SweepRounds)
			for range cfg.SweepRounds {
				m, err := measure(ctx, cfg, store, c.sys, c.set, sh.name, sh.n)
				if err != nil {
					fmt.Fprintln(out, " failed")
					return nil, fmt.Errorf("sweep %s %s %s (%s): %w", store, c.sys.Name(), sh.name, c.set, err)
				}
				rates = append(rates, m.PerSecond())
			}
			r := median(rates)
			fmt.Fprintf(out, " %14.0f", r)
			k := [2]string{c.sys.Name(), sh.name}
			if r > top[k] {
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
