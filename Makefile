# Leasehold — `make help` lists the targets.
GO ?= go
PKGS ?= ./...

.DEFAULT_GOAL := help

## help: list the targets
.PHONY: help
help:
	@grep -E '^## ' $(MAKEFILE_LIST) | sed 's/^## /  /'

## test: run every test (SQLite always; Postgres at $$LEASEHOLD_TEST_DATABASE_URL, default local 127.0.0.1:5432/test)
.PHONY: test
test:
	$(GO) test -count=1 -timeout 30m $(PKGS)

## test-race: run every test with the race detector (what CI runs): test-race-pass, then test-norace
.PHONY: test-race
test-race: test-race-pass test-norace

## test-race-pass: the race pass (every package but the hostile-input corpus, libSQL and drivertest)
.PHONY: test-race-pass
test-race-pass:
	$(GO) test -race -count=1 -timeout 30m -skip 'TestConformance/HostileInputContract' $$($(GO) list $(PKGS) | grep -v -e '/driver/libsql$$' -e '/driver/drivertest$$')

## test-norace: the rest of test-race, without -race (mostly waits on fsync and Postgres: .ci/run overlaps it with sim-ci); its two halves are test-norace-hostile and test-norace-engines
.PHONY: test-norace test-norace-hostile test-norace-engines
test-norace: test-norace-hostile test-norace-engines
test-norace-hostile:
	# Without -race: the hostile-input corpus, one caller at a time through
	# each store (drivertest: 3,000+ calls per store; the conformance
	# suite's HostileInputContract: two thirds of a driver's run) — under
	# -race they were half of CI; the drivers' concurrent code is raced by
	# the rest of their conformance runs above.
	$(GO) test -count=1 -timeout 30m -run 'TestConformance/HostileInputContract' ./driver/sqlite ./driver/postgres
	# The SQLite page counts too heavy for -race (race_on_test.go skips them there).
	$(GO) test -count=1 -timeout 30m -run '^TestEventAppendWALFrames$$' -v ./driver/sqlite
test-norace-engines:
	# libSQL is a cgo engine under the SQLite driver's Go code (raced
	# above); drivertest holds the cross-store comparison of the corpus.
	$(GO) test -count=1 -timeout 30m ./driver/libsql ./driver/drivertest

## test-load: the 10,000-run load test on both drivers, without the race detector (CI runs it)
.PHONY: test-load
test-load:
	$(GO) test -count=1 -run 'TestManyRunsAcrossFourWorkers' -v ./internal/scheduler

## sim: many simulator seeds (SEEDS, from FROM; default 5000 from 1), all cores
SEEDS ?= 5000
FROM ?= 1
.PHONY: sim
sim:
	$(GO) run ./cmd/leasehold sim --seeds $(SEEDS) --from $(FROM)

## sim-ci: the fixed simulator block CI runs: 500 seeds and the replay check without -race, and each planted bug caught within 1,000 seeds
# Its two halves are single-threaded (one seed after another): .ci/run runs them side by side.
.PHONY: sim-ci sim-ci-seeds sim-ci-bugs
sim-ci: sim-ci-seeds sim-ci-bugs
sim-ci-seeds:
	$(GO) test -count=1 -run '^(TestSeeds|TestSeedReplaysExactly)$$' -v ./internal/sim
sim-ci-bugs:
	$(GO) test -tags simbugs -count=1 -run '^TestPlantedBugsAreCaught$$' -v ./internal/sim

## model: check the Promela model of the lease protocol with spin (and that each planted bug yields a counterexample)
.PHONY: model
model:
	$(GO) test -count=1 -v ./model

## test-faults: the real-fault scenarios with worker processes on Postgres (part of test and test-race too)
.PHONY: test-faults
test-faults:
	$(GO) test -race -count=1 -v ./internal/pgcluster ./internal/faulttest

## lint: gofmt check, go vet, and bench/peers (its own module) builds
.PHONY: lint
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) vet -tags simbugs ./internal/sim ./internal/keeper ./driver/sqlite ./driver/postgres ./internal/failover
	cd bench/peers && $(GO) build -o /dev/null ./... && $(GO) vet ./...

## peers-smoke: bench/peers (its own module) end to end at 1,000 runs per system on SQLite and Postgres, a small River sweep included (CI runs it; fails without Postgres under CI=true)
.PHONY: peers-smoke
peers-smoke:
	cd bench/peers && $(GO) test -count=1 -timeout 5m -run '^TestSmoke$$' -v .

## bench: Go benchmarks (ReportAllocs) and the side-by-side `leasehold bench journal`
.PHONY: bench
bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./...
	$(GO) run ./cmd/leasehold bench journal --duration 3s

## demo: the main job on the embedded default store (./leasehold.db)
.PHONY: demo
demo:
	$(GO) run ./cmd/leasehold demo

## fuzz: run every fuzz target (found with go test -list) for FUZZTIME each (default 30s); scripts/fuzz.sh
FUZZTIME ?= 30s
.PHONY: fuzz
fuzz:
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

## fuzz-diff: the differential fuzzer of the two stores (internal/difftest) for DIFFTIME (default 30s, what CI runs), on SQLite and the Postgres of `make test`; scripts/fuzz-diff.sh
DIFFTIME ?= 30s
DIFFWORKERS ?=
.PHONY: fuzz-diff
fuzz-diff:
	DIFFTIME=$(DIFFTIME) DIFFWORKERS=$(DIFFWORKERS) GO=$(GO) bash scripts/fuzz-diff.sh
