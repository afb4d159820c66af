//go:build !race

package sim_test

// defaultSeeds: the block CI runs without the race detector.
const defaultSeeds = 500
