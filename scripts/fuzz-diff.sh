#!/usr/bin/env bash
# Runs the differential fuzzer of the two stores, FuzzStoresAgree in
# internal/difftest, for a bounded time (make fuzz-diff; CI runs 30s):
#
#   go test -run '^$' -fuzz '^FuzzStoresAgree$' -fuzztime "$DIFFTIME" \
#     -fuzzminimizetime 0 ./internal/difftest
#
# -fuzzminimizetime 0: nearly every execution of this stateful target adds
# coverage (the SQLite engine is instrumented too), and go minimizes each
# new input for up to 60s by default: a 60s run made 15 executions instead
# of ~1,300. A failing input is then not minimized; its report lists its
# ops (at most 40) and go saves it under internal/difftest/testdata/fuzz.
#
# One failure is forgiven, and only exactly it: Go 1.26's fuzzing
# coordinator fails a run with a bare "context deadline exceeded" when
# -fuzztime runs out while a worker is mid-execution (go.dev/issue/75804,
# fixed in Go 1.27), which a loaded machine hits with this slow target
# (the first 10-minute run ended so, after 20,327 executions and no
# difference). Any written failing input, any other failure line, or a
# failure inside the target still fails the run.
#
# DIFF_FRESH=1 (what .ci/run sets) first drops the corpus go has cached for
# this target on this machine ($GOCACHE/fuzz/…/FuzzStoresAgree), so a short
# run starts from the committed seeds: every cached input is re-run to
# gather baseline coverage before fuzzing starts, and after a 10-minute
# local run (1,166 inputs) that took 28 of CI's 30 seconds.
#
# Environment: DIFFTIME (-fuzztime syntax: 30s, 10m, 2000x; default 30s),
# DIFFWORKERS (-parallel; default go's, GOMAXPROCS), GO (default go), and
# the Postgres of `make test` (LEASEHOLD_TEST_DATABASE_URL; with CI=true an
# unreachable one fails the run).
set -euo pipefail

cd "$(dirname "$0")/.."

GO=${GO:-go}
DIFFTIME=${DIFFTIME:-30s}
args=(-run '^$' -fuzz '^FuzzStoresAgree$' -fuzztime "$DIFFTIME" -fuzzminimizetime 0)
[[ -n ${DIFFWORKERS:-} ]] && args+=(-parallel "$DIFFWORKERS")

if [[ ${DIFF_FRESH:-} == 1 ]]; then
	cache="$("$GO" env GOCACHE)/fuzz/github.com/leasehold/leasehold/internal/difftest/FuzzStoresAgree"
	rm -rf "$cache"
fi

log=$(mktemp "${TMPDIR:-/tmp}/leasehold-fuzz-diff.XXXXXX")
trap 'rm -f "$log"' EXIT

if "$GO" test "${args[@]}" ./internal/difftest 2>&1 | tee "$log"; then
	exit 0
fi
if grep -qx '    context deadline exceeded' "$log" &&
	[[ $(grep -c -- '--- FAIL' "$log") -eq 1 ]] &&
	! grep -q 'Failing input written to' "$log" &&
	! grep -q '_test\.go:[0-9]' "$log"; then
	echo "fuzz-diff: the run ended on Go 1.26's -fuzztime deadline race (go.dev/issue/75804) with no failing input: passed"
	exit 0
fi
exit 1
