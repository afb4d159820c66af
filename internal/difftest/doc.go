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
// Its seed corpus runs on every plain `go test`.
package difftest
