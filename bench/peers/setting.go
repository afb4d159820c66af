package main

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// setting is one configuration of a system under test. Leasehold reads
// Workers (handlers of its one Worker) and FetchCooldown (its
// WorkerConfig.FetchCooldown; its FetchInterval is fixed at `leasehold
// bench runs`' 5ms); River reads all three (MaxWorkers, FetchCooldown,
// FetchPollInterval; a zero duration keeps River's default).
type setting struct {
	Workers           int
	FetchCooldown     time.Duration
	FetchPollInterval time.Duration
}

// String names the setting as the tables print it.
func (s setting) String() string {
	return fmt.Sprintf("%d workers, cooldown %s, poll %s", s.Workers,
		orDefault(s.FetchCooldown, "default"), orDefault(s.FetchPollInterval, "default"))
}

// label names the setting for system sys: Leasehold's poll interval is
// fixed, so only its handler count and cooldown vary.
func (s setting) label(sys string) string {
	if sys == "leasehold" {
		return fmt.Sprintf("%d handlers, cooldown %s", s.Workers, orDefault(s.FetchCooldown, "default"))
	}
	return s.String()
}

// leaseholdSettings are the settings Leasehold is measured at: every
// handler count × FetchCooldown of the command line (FetchInterval 5ms).
func leaseholdSettings(cfg config) []setting {
	var out []setting
	for _, w := range cfg.LeaseholdConcurrency {
		for _, c := range cfg.LeaseholdFetchCooldown {
			out = append(out, setting{Workers: w, FetchCooldown: c, FetchPollInterval: 5 * time.Millisecond})
		}
	}
	return out
}

// riverSettings is River's grid: every MaxWorkers × FetchCooldown ×
// FetchPollInterval of the command line, less the pairs River refuses
// (a poll interval shorter than the cooldown, once defaults are applied).
func riverSettings(cfg config) []setting {
	var out []setting
	for _, w := range cfg.RiverMaxWorkers {
		for _, c := range cfg.RiverFetchCooldown {
			for _, p := range cfg.RiverFetchPollInterval {
				if cmp.Or(p, time.Second) < cmp.Or(c, 100*time.Millisecond) {
					continue
				}
				out = append(out, setting{Workers: w, FetchCooldown: c, FetchPollInterval: p})
			}
		}
	}
	return out
}

// intList is a flag of comma-separated positive integers.
type intList []int

func (l *intList) String() string {
	parts := make([]string, len(*l))
	for i, v := range *l {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

func (l *intList) Set(s string) error {
	var out []int
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 1 {
			return fmt.Errorf("%q: want positive integers separated by commas", s)
		}
		out = append(out, v)
	}
	*l = slices.Compact(out)
	return nil
}

// durationList is a flag of comma-separated durations; 0 means the peer's
// default.
type durationList []time.Duration

func (l *durationList) String() string {
	parts := make([]string, len(*l))
	for i, v := range *l {
		parts[i] = v.String()
	}
	return strings.Join(parts, ",")
}

func (l *durationList) Set(s string) error {
	var out []time.Duration
	for _, p := range strings.Split(s, ",") {
		v, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || v < 0 {
			return fmt.Errorf("%q: want durations separated by commas (0 for River's default)", s)
		}
		out = append(out, v)
	}
	*l = slices.Compact(out)
	return nil
}
