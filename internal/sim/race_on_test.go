//go:build race

package sim_test

// defaultSeeds: the block CI runs with the race detector (data races, not seed coverage: sim-ci runs 500 seeds without it).
const defaultSeeds = 20
