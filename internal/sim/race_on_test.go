//go:build race

package sim_test

// defaultSeeds: the block CI runs with the race detector.
const defaultSeeds = 50
