package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"
)

// sideBySide runs cfg.Rounds rounds on store of both shapes, each system at
// its setting in b, in one sitting: leasehold drain, river drain,
// leasehold mixed, river mixed, the first system swapped every other round
// so neither always runs on the warmer server.
func sideBySide(ctx context.Context, cfg config, store string, b best, out io.Writer) (*storeReport, error) {
	rep := newStoreReport(store, b)
	fmt.Fprintf(out, "\n[%s] side by side: %d rounds; load average %s\n", store, cfg.Rounds, loadAverage())
	shapes := []struct {
		name string
		n    int
	}{{shapeDrain, cfg.Drain}, {shapeMixed, cfg.Mixed}}
	systems := []system{leaseholdSystem{}, riverSystem{}}
	for round := range cfg.Rounds {
		order := systems
		if round%2 == 1 {
			order = []system{systems[1], systems[0]}
		}
		for _, shape := range shapes {
			for _, sys := range order {
				fmt.Fprintf(out, "  round %d  %-9s %-5s %7d runs ... ", round+1, sys.Name(), shape.name, shape.n)
				m, err := measure(ctx, cfg, store, sys, b[sys.Name()][shape.name], shape.name, shape.n)
				if err != nil {
					fmt.Fprintln(out, "failed")
					return nil, fmt.Errorf("%s %s %s: %w", store, sys.Name(), shape.name, err)
				}
				fmt.Fprintf(out, "%8s  %8.0f runs/s  CPU µs/run: client %.1f, server %s  (start %s, not timed; stop %s; %d completed rows)\n",
					m.Elapsed.Round(time.Millisecond), m.PerSecond(), m.CPUPerRun(), microsOrNA(m.ServerCPUPerRun()),
					m.Start.Round(time.Millisecond), m.Stop.Round(time.Millisecond), m.Completed)
				rep.add(sys.Name(), shape.name, m)
			}
		}
	}
	return rep, nil
}

// microsOrNA prints a CPU µs figure, or n/a for NaN (not read).
func microsOrNA(us float64) string {
	if math.IsNaN(us) {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", us)
}
