package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
)

// storeReport gathers the side-by-side measurements of one store.
type storeReport struct {
	store    string
	best     best                         // the setting each system ran at, per shape
	rates    map[[2]string][]float64      // (system, shape) → runs/s per round
	cpu      map[[2]string][]float64      // (system, shape) → client CPU µs per run, per round
	srvCPU   map[[2]string][]float64      // (system, shape) → server CPU µs per run, per round (NaN: not read)
	settings map[string]map[string]string // system → settings of its connections
}

func newStoreReport(store string, b best) *storeReport {
	return &storeReport{store: store, best: b, rates: map[[2]string][]float64{}, cpu: map[[2]string][]float64{}, srvCPU: map[[2]string][]float64{}, settings: map[string]map[string]string{}}
}

func (r *storeReport) add(system, shape string, m measurement) {
	k := [2]string{system, shape}
	r.rates[k] = append(r.rates[k], m.PerSecond())
	r.cpu[k] = append(r.cpu[k], m.CPUPerRun())
	r.srvCPU[k] = append(r.srvCPU[k], m.ServerCPUPerRun())
	if r.settings[system] == nil {
		r.settings[system] = m.Settings
	}
}

// print writes the settings each system ran with, then per shape a row per
// round — each system's runs/s and their ratio, the two measured next to
// each other — and the median and the worst of the rounds' ratios: the
// worst is what a claim of "at least N×" must stand on.
func (r *storeReport) print(out io.Writer) {
	fmt.Fprintf(out, "\n== %s ==\n", r.store)
	for _, sys := range []string{"leasehold", "river"} {
		s := r.settings[sys]
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(s)) {
			kv = append(kv, k+"="+s[k])
		}
		fmt.Fprintf(out, "  %-9s connections: %s\n", sys, strings.Join(kv, ", "))
	}
	for _, shape := range []string{shapeDrain, shapeMixed} {
		lh := r.rates[[2]string{"leasehold", shape}]
		rv := r.rates[[2]string{"river", shape}]
		if len(lh) == 0 || len(lh) != len(rv) {
			continue
		}
		fmt.Fprintf(out, "  %s: leasehold at %s; river at %s\n", shape, r.best["leasehold"][shape].label("leasehold"), r.best["river"][shape].label("river"))
		fmt.Fprintf(out, "    %-7s %16s %16s %16s\n", "round", "leasehold runs/s", "river runs/s", "leasehold/river")
		ratios := make([]float64, len(lh))
		for i := range lh {
			ratios[i] = lh[i] / rv[i]
			fmt.Fprintf(out, "    %-7d %16.0f %16.0f %15.2fx\n", i+1, lh[i], rv[i], ratios[i])
		}
		fmt.Fprintf(out, "    %-7s %16.0f %16.0f %15.2fx\n", "median", median(lh), median(rv), median(ratios))
		fmt.Fprintf(out, "    %-7s %16s %16s %15.2fx\n", "worst", "", "", slices.Min(ratios))
		// Counted, not timed: the load of other processes does not bend
		// them (cpu.go). On SQLite the store runs in this process, so the
		// client's is the whole system's CPU.
		lhC, rvC := median(r.cpu[[2]string{"leasehold", shape}]), median(r.cpu[[2]string{"river", shape}])
		fmt.Fprintf(out, "    CPU µs/run (medians): client leasehold %.1f, river %.1f", lhC, rvC)
		lhS, rvS := median(r.srvCPU[[2]string{"leasehold", shape}]), median(r.srvCPU[[2]string{"river", shape}])
		if !math.IsNaN(lhS) && !math.IsNaN(rvS) {
			fmt.Fprintf(out, "; server leasehold %.1f, river %.1f; client+server river/leasehold %.2fx",
				lhS, rvS, (rvC+rvS)/(lhC+lhS))
		} else if r.store == storeSQLite {
			fmt.Fprintf(out, " (the whole system's); river/leasehold %.2fx", rvC/lhC)
		}
		fmt.Fprintln(out)
	}
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
