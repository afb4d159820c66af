// Package difftest is the differential fuzzer of the two stores of record
// (issue 17, "Hostile input"): FuzzStoresAgree decodes its input into a
// bounded sequence of driver operations — enqueue, claim, renew, complete,
// fail, block, cancel, reclaim, effects, transactional effects, events,
// world creation, appends, grants, renewals, handoffs, revocations, sweeps,
// imports and moves of the store clock — with arguments drawn from valid
// and hostile values alike, applies it to SQLite and to Postgres through
// driver.Validating (the path every Client call takes), and fails on the
// first operation whose typed outcome differs, or on the first difference
// in the read-back of the whole state.
//
// Why: the conformance suite (driver/drivertest) states the behaviours
// someone thought of; two stores written against one interface also agree
// on every behaviour nobody thought of, or one of them has a defect. Each
// difference the fuzzer found became a conformance case.
//
// The package has no code outside its tests; this file exists so that the
// package is placed in internal/layers' table like every other.
//
// Run it with `make fuzz-diff` (DIFFTIME, default 30s: what CI runs), or as
// go test -run '^$' -fuzz '^FuzzStoresAgree$' -fuzztime 10m ./internal/difftest
// Its seed corpus runs on every plain `go test`; DIFFTEST_LOG=1 go test -v
// prints each seed's ops and outcomes.
//
// Files: stores_test.go (the pair of stores and the reset between
// executions), input_test.go (the byte stream and the value pools),
// ops_test.go (the op table), ops_runs_test.go, ops_effects_test.go,
// ops_worlds_test.go, ops_import_test.go (one decoder per operation),
// outcome_test.go (typed outcomes, normalized), readback_test.go (reads and
// the whole-state read-back), fuzz_test.go (the target), seeds_test.go.
package difftest
