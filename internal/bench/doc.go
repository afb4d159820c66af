// Package bench measures what docs/BENCHMARKS.md quotes, side by side in one
// run: journal appends per second with 1 and with N concurrent appenders on
// each store, beside the raw fsync rate of the same disk and the store's
// round trip, with the durability settings the stores ran with.
package bench
