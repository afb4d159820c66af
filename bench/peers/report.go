package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// storeReport gathers the measurements of one store.
type storeReport struct {
	store    string
	rates    map[[2]string][]float64      // (system, shape) → runs/s per round
	settings map[string]map[string]string // system → settings of its connections
}

func newStoreReport(store string) *storeReport {
	return &storeReport{store: store, rates: map[[2]string][]float64{}, settings: map[string]map[string]string{}}
}

func (r *storeReport) add(system, shape string, m measurement) {
	k := [2]string{system, shape}
	r.rates[k] = append(r.rates[k], m.PerSecond())
	if r.settings[system] == nil {
		r.settings[system] = m.Settings
	}
}

// print writes the settings each system ran with, then a row per shape:
// the median runs/s of each system over the rounds and their ratio.
func (r *storeReport) print(out io.Writer) {
	fmt.Fprintf(out, "\n== %s ==\n", r.store)
	for _, sys := range []string{"leasehold", "river"} {
		s := r.settings[sys]
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(s)) {
			kv = append(kv, k+"="+s[k])
		}
		fmt.Fprintf(out, "  %-9s settings: %s\n", sys, strings.Join(kv, ", "))
	}
	fmt.Fprintf(out, "  %-6s %16s %16s %18s\n", "shape", "leasehold runs/s", "river runs/s", "leasehold/river")
	for _, shape := range []string{shapeDrain, shapeMixed} {
		lh := r.rates[[2]string{"leasehold", shape}]
		rv := r.rates[[2]string{"river", shape}]
		if len(lh) == 0 || len(rv) == 0 {
			continue
		}
		fmt.Fprintf(out, "  %-6s %16.0f %16.0f %17.2fx\n", shape, median(lh), median(rv), median(lh)/median(rv))
		if len(lh) > 1 {
			fmt.Fprintf(out, "         rounds: leasehold %s; river %s\n", join(lh), join(rv))
		}
	}
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func join(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.0f", x)
	}
	return strings.Join(parts, " ")
}
