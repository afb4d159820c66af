// Package bugs holds the planted-bug switches the simulator and the model
// tests use to show they catch a broken rule (SPEC §5: "break one rule at a
// time … and show the simulator finds each").
//
// In a normal build every switch is a false constant, so the guarded code
// is dead and compiled away: production binaries cannot turn a bug on.
// Built with -tags simbugs, each is a variable a test sets for one run.
// Only tests built with that tag (internal/sim/bugs_test.go) ever set one.
package bugs
