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
	$(GO) test -count=1 $(PKGS)

## test-race: run every test with the race detector (what CI runs)
.PHONY: test-race
test-race:
	$(GO) test -race -count=1 $(PKGS)

## test-load: the 10,000-run load test on both drivers, without the race detector (CI runs it)
.PHONY: test-load
test-load:
	$(GO) test -count=1 -run 'TestManyRunsAcrossFourWorkers' -v ./scheduler

## lint: gofmt check and go vet
.PHONY: lint
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)

## bench: Go benchmarks (ReportAllocs) and the side-by-side `leasehold bench journal`
.PHONY: bench
bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./...
	$(GO) run ./cmd/leasehold bench journal --duration 3s

## demo: the main job on the embedded default store (./leasehold.db)
.PHONY: demo
demo:
	$(GO) run ./cmd/leasehold demo

## fuzz: run each fuzz target for FUZZTIME (default 30s)
FUZZTIME ?= 30s
.PHONY: fuzz
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzJSONLReader$$' -fuzztime $(FUZZTIME) ./journal
	$(GO) test -run '^$$' -fuzz '^FuzzNormalizePayload$$' -fuzztime $(FUZZTIME) ./journal
	$(GO) test -run '^$$' -fuzz '^FuzzSaturating$$' -fuzztime $(FUZZTIME) ./lease
