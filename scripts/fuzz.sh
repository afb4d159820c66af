#!/usr/bin/env bash
# Runs every Go fuzz target of the module for a bounded time, one after the
# other, and prints one summary line per target.
#
# Targets are found with `go test -list '^Fuzz' ./...`, so a new FuzzX in any
# package is picked up without touching this script. Each one runs alone as
#
#   go test -run '^$' -fuzz '^FuzzX$' -fuzztime "$FUZZTIME" ./pkg
#
# (the seed corpora under testdata/fuzz/ also run as plain unit tests in
# `go test ./...`).
#
# Environment:
#   FUZZTIME          time per target, in -fuzztime syntax (10s, 2m, 50000x).
#                     Default 10s.
#   FUZZMINIMIZETIME  cap on minimizing each new input (-fuzzminimizetime).
#                     Default 1s. go minimizes every input that adds
#                     coverage, not only failing ones; with its own default
#                     of 60s a few large new inputs of a JSONL target eat a
#                     whole short run (FuzzAudit: 6k execs in 20s at 5s,
#                     80k at 1s). Raise it for a better-minimized crasher.
#   FUZZ_TIMEOUT      -timeout of each test binary, so a hang cannot stall
#                     the run forever. Default 30m; raise it with FUZZTIME.
#   FUZZ_PACKAGES     package patterns to search. Default ./...
#   FUZZ_MATCH        extended regexp: run only targets whose pkg:FuzzName
#                     matches it.
#   FUZZ_WORKERS      fuzzing workers per target (-parallel). Default: go's
#                     (GOMAXPROCS).
#   FUZZ_LOGDIR       where each target's full output is kept. Default: a new
#                     temporary directory, named at the end.
#   GO                the go command. Default go.
#
# A failing input is written by go to <pkg>/testdata/fuzz/<FuzzName>/<hash>
# and replayed by `go test -run '^FuzzName$/<hash>' ./<pkg>`; the tail of the
# target's output, printed on failure, names both. Commit it as a regression
# seed only once the bug it shows is fixed.
#
# Exit status: 0 when every target passed; 1 when a target failed or a
# package's tests do not build (its targets could not even be listed).
set -euo pipefail

cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-1s}
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-30m}
FUZZ_PACKAGES=${FUZZ_PACKAGES:-./...}
FUZZ_MATCH=${FUZZ_MATCH:-}
FUZZ_WORKERS=${FUZZ_WORKERS:-}
logdir=${FUZZ_LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/leasehold-fuzz.XXXXXX")}
mkdir -p "$logdir"

module=$("$GO" list -m)

# pkgdir maps an import path to the ./relative directory go test is given.
pkgdir() {
	local p=${1#"$module"}
	echo ".${p:-}"
}

# --- discover -------------------------------------------------------------
# go test -list prints each package's matching names, then its "ok" line;
# a package whose tests do not build prints a FAIL line instead.
listing="$logdir/list.txt"
# shellcheck disable=SC2086 # FUZZ_PACKAGES is a list of patterns
if ! "$GO" test -list '^Fuzz' $FUZZ_PACKAGES >"$listing" 2>&1; then
	list_failed=1
else
	list_failed=0
fi

targets=()
broken=()
pending=()
while IFS= read -r line; do
	case $line in
	Fuzz*)
		[[ $line =~ ^Fuzz[A-Za-z0-9_]*$ ]] && pending+=("$line")
		;;
	ok*)
		pkg=$(awk '{print $2}' <<<"$line")
		for name in ${pending[@]+"${pending[@]}"}; do
			target="$(pkgdir "$pkg"):$name"
			if [[ -z $FUZZ_MATCH || $target =~ $FUZZ_MATCH ]]; then
				targets+=("$target")
			fi
		done
		pending=()
		;;
	FAIL*)
		pkg=$(awk '{print $2}' <<<"$line")
		[[ -n $pkg ]] && broken+=("$(pkgdir "$pkg")")
		pending=()
		;;
	esac
done <"$listing"

if ((list_failed)) && ((${#broken[@]} == 0)); then
	echo "fuzz: go test -list failed:" >&2
	cat "$listing" >&2
	exit 1
fi
for b in ${broken[@]+"${broken[@]}"}; do
	echo "fuzz: cannot list the targets of $b: its tests do not build (see $listing)" >&2
done
if ((${#targets[@]} == 0)); then
	echo "fuzz: no fuzz targets found in $FUZZ_PACKAGES${FUZZ_MATCH:+ matching $FUZZ_MATCH}" >&2
	exit 1
fi

echo "fuzz: ${#targets[@]} targets, $FUZZTIME each (minimize ≤ $FUZZMINIMIZETIME); logs in $logdir"
for t in "${targets[@]}"; do
	echo "  $t"
done

# --- run --------------------------------------------------------------------
extra=()
[[ -n $FUZZ_WORKERS ]] && extra+=(-parallel "$FUZZ_WORKERS")

summary=()
failed=0
start_all=$SECONDS
for target in "${targets[@]}"; do
	dir=${target%%:*}
	name=${target##*:}
	base=${dir#./}
	[[ $dir == . ]] && base=root
	log="$logdir/${base//\//_}-$name.log"
	echo "==> $target"
	start=$SECONDS
	if "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" \
		-fuzzminimizetime "$FUZZMINIMIZETIME" -timeout "$FUZZ_TIMEOUT" \
		${extra[@]+"${extra[@]}"} "$dir" >"$log" 2>&1; then
		result=ok
	else
		result=FAIL
		failed=1
		tail -n 40 "$log" | sed 's/^/    /'
	fi
	wall=$((SECONDS - start))
	# The last progress line carries the totals:
	# "fuzz: elapsed: 20s, execs: 123456 (6172/sec), new interesting: ..."
	# (none when the run ended while go was still replaying the corpus).
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -n 1 | awk '{print $2}' || true)
	elapsed=$(grep -o 'fuzz: elapsed: [0-9hms.]*' "$log" | tail -n 1 | awk '{print $3}' || true)
	summary+=("$(printf '%-46s %8s %8s %12s  %s' "$target" "${elapsed:--}" "${wall}s" "${execs:--}" "$result")")
done

echo
printf '%-46s %8s %8s %12s  %s\n' "target" "fuzzed" "wall" "execs" "result"
printf '%s\n' "${summary[@]}"
for b in ${broken[@]+"${broken[@]}"}; do
	printf '%-46s %8s %8s %12s  %s\n' "$b:(not listed)" - - - "FAIL (tests do not build)"
	failed=1
done
echo "fuzz: $((SECONDS - start_all))s in all; logs in $logdir"
exit "$failed"
