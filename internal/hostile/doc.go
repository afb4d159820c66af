// Package hostile is the one corpus of hostile input values (SPEC §5 "Bad
// input"): strings, JSON payloads, integers, counts, durations and times
// chosen to sit on every encoding trap and at and one past every limit of
// docs/LIMITS.md.
//
// The corpus says nothing about which values are refused: a test drives
// every value into every entry point that takes its kind and holds the
// answer to the three-way contract — a typed error matching one exported
// sentinel and no change to the store, or an accepted value that reads
// back byte-identical (and, for a journal, survives export → audit →
// import) — and compares the typed outcomes of two stores. Expected
// outcomes written next to the values would only restate the validators
// (and a wrong one would be copied into the test); the contract is what
// must hold for every value, whichever way the rules decide it.
//
// The conformance suite (driver/drivertest, cases_hostile*.go) is its
// first user; the server's API tests are meant to reuse it, which is why
// it is a package of its own with no test dependencies.
package hostile
