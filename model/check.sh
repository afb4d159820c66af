#!/usr/bin/env bash
# check.sh — model-check lease.pml (runs) and world.pml (worlds) with spin
# (see README.md).
#
#   model/check.sh                 the correct model: exhaustive, must report 0 errors
#   model/check.sh all             correct, cover, every planted bug and the known
#                                  limit, then world, world-cover, world-bugs and
#                                  the world-effects and world-keeper variants
#                                  (with their cover runs)
#   model/check.sh world-bugs      the world model's planted bugs and finding
#   model/check.sh VARIANT...      any of the variants below
#
# Variants:
#   correct              exhaustive search (-DSAFETY, DFS); fails on any error
#                        or on an incomplete search
#   cover                the same with every step compiled as `atomic`, so spin
#                        lists unreached statements; fails if anything but a
#                        VIOLATED branch is unreached (the properties are checked
#                        in reachable code: not vacuous)
#   no-fence-complete    -DBUG_NO_FENCE_COMPLETE  expects P1
#   drain-revives        -DBUG_DRAIN_REVIVES      expects P5
#   runway-from-answer   -DBUG_RUNWAY_FROM_ANSWER expects P4 (or P4b, P4r, P2)
#   no-gate              -DBUG_NO_GATE            expects P2
#   silent-rerun         -DBUG_SILENT_RERUN       expects P3 (a, b or c)
#   bad-timing           -DD_STOP=5 (D_stop + S > T_lease, which
#                        Timing.Validate refuses)  expects P4r
#   limit-zombie-double  -DLIMIT_ZOMBIE_DOUBLE    expects LIMIT (a documented limit)
#   fenced-reconcile     -DFENCED_RECONCILE -DLIMIT_ZOMBIE_DOUBLE: the remedy
#                        for that limit (the reconcile query carries the asker's
#                        token); exhaustive, must report 0 errors. Not in `all`.
# World variants (world.pml: the lease inside the journal, SPEC §4):
#   world                the correct world model: exhaustive, 0 errors
#   world-cover          as cover, for world.pml
#   world-no-epoch-check -DBUG_WORLD_NO_EPOCH_CHECK expects W1
#   world-adopt-old-epoch -DBUG_ADOPT_OLD_EPOCH    expects W3
#   world-renew-revives  -DBUG_RENEW_REVIVES        expects W5
#   world-no-key-dedup   -DBUG_NO_KEY_DEDUP         expects W6 (a command applied twice)
#   world-append-before-replay -DBUG_APPEND_BEFORE_REPLAY expects W8
#   world-effects        -DEFFECTS: K's effect E through the journal (W9, W10);
#                        tighter bounds (MAXPOS 7, MAXREV 0): exhaustive, 0 errors
#   world-effects-cover  as cover, for -DEFFECTS
#   world-reinvoke-uncertain -DEFFECTS -DBUG_REINVOKE_UNCERTAIN expects W9
#   world-effect-no-gate -DEFFECTS -DBUG_EFFECT_NO_GATE       expects W10
#   world-effects-revoke -DEFFECTS -DMAXREV=1: effects with an operator revoke
#                        (and so grants): exhaustive, 0 errors
#   world-intent-key-without-epoch -DEFFECTS -DMAXREV=1
#                        -DBUG_INTENT_KEY_WITHOUT_EPOCH (the intent key
#                        fx:<id>:<attempt>, without the epoch: the key rule
#                        answers a revoked holder's delayed intent OK)
#                        expects W9
#   world-keeper         -DKEEPER: drains that only confirm beside the renewals
#                        (extensions): exhaustive, 0 errors
#   world-keeper-cover   as cover, for -DKEEPER
#   world-confirm-moves-runway -DKEEPER -DBUG_CONFIRM_MOVES_RUNWAY expects W4
#   world-band           -DBAND: every handoff a band move, its host.band
#                        note journaled first (W11)
#   world-band-no-note   -DBAND -DBUG_BAND_NO_NOTE                 expects W11
#   world-sim-readopt    -DSIM_READOPT: sim/world.go's adoption rule as written
#                        (may re-adopt an epoch whose handoff is in flight)
#                        expects W4 (a finding, see README.md)
# A bug variant searches breadth-first (-DBFS: the shortest counterexample),
# fails unless it finds one violating an expected property, and prints it:
# the model's narration (spin -t) and the trail (spin -t -p, one line per step).
#
# Environment: SPIN_DEFS adds defines to every variant (e.g. "-DMAXINC=2");
# KEEP=1 keeps the work directories (with pan.c, the trail and the full
# `spin -t -p` output); PAN_MEM_HASH sets pan's -w (default 24; 26 for
# world-effects-revoke).
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hash_w=${PAN_MEM_HASH:-24}
extra=${SPIN_DEFS:-}

for tool in spin gcc; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "check.sh: $tool not found on PATH (Debian: apt-get install -y spin gcc)" >&2
		exit 2
	fi
done

# defines and expected property prefix of each variant
variant_defs() {
	case "$1" in
	correct) echo "" ;;
	cover) echo "-DCOVER" ;;
	no-fence-complete) echo "-DBUG_NO_FENCE_COMPLETE" ;;
	drain-revives) echo "-DBUG_DRAIN_REVIVES" ;;
	runway-from-answer) echo "-DBUG_RUNWAY_FROM_ANSWER" ;;
	no-gate) echo "-DBUG_NO_GATE" ;;
	silent-rerun) echo "-DBUG_SILENT_RERUN" ;;
	bad-timing) echo "-DD_STOP=5" ;;
	limit-zombie-double) echo "-DLIMIT_ZOMBIE_DOUBLE" ;;
	fenced-reconcile) echo "-DFENCED_RECONCILE -DLIMIT_ZOMBIE_DOUBLE" ;;
	world) echo "" ;;
	world-cover) echo "-DCOVER" ;;
	world-no-epoch-check) echo "-DBUG_WORLD_NO_EPOCH_CHECK" ;;
	world-adopt-old-epoch) echo "-DBUG_ADOPT_OLD_EPOCH" ;;
	world-renew-revives) echo "-DBUG_RENEW_REVIVES" ;;
	world-sim-readopt) echo "-DSIM_READOPT" ;;
	world-no-key-dedup) echo "-DBUG_NO_KEY_DEDUP" ;;
	world-append-before-replay) echo "-DBUG_APPEND_BEFORE_REPLAY" ;;
	world-effects) echo "-DEFFECTS" ;;
	world-effects-cover) echo "-DEFFECTS -DCOVER" ;;
	world-reinvoke-uncertain) echo "-DEFFECTS -DBUG_REINVOKE_UNCERTAIN" ;;
	world-effect-no-gate) echo "-DEFFECTS -DBUG_EFFECT_NO_GATE" ;;
	world-effects-revoke) echo "-DEFFECTS -DMAXREV=1 -DMAXPOS=6" ;;
	world-intent-key-without-epoch) echo "-DEFFECTS -DMAXREV=1 -DMAXPOS=6 -DBUG_INTENT_KEY_WITHOUT_EPOCH" ;;
	world-keeper) echo "-DKEEPER" ;;
	world-keeper-cover) echo "-DKEEPER -DCOVER" ;;
	world-confirm-moves-runway) echo "-DKEEPER -DBUG_CONFIRM_MOVES_RUNWAY" ;;
	world-band) echo "-DBAND" ;;
	world-band-no-note) echo "-DBAND -DBUG_BAND_NO_NOTE" ;;
	*) return 1 ;;
	esac
}
variant_expect() { # an extended regexp over the first VIOLATED_ name
	case "$1" in
	no-fence-complete) echo '^VIOLATED_P1_' ;;
	drain-revives) echo '^VIOLATED_P5_' ;;
	runway-from-answer) echo '^VIOLATED_(P4_|P4b_|P4r_|P2_)' ;;
	no-gate) echo '^VIOLATED_P2_' ;;
	silent-rerun) echo '^VIOLATED_P3[abc]_' ;;
	bad-timing) echo '^VIOLATED_P4r_' ;;
	limit-zombie-double) echo '^VIOLATED_LIMIT_' ;;
	world-no-epoch-check) echo '^VIOLATED_W1_' ;;
	world-adopt-old-epoch) echo '^VIOLATED_W3_' ;;
	world-renew-revives) echo '^VIOLATED_W5_' ;;
	world-sim-readopt) echo '^VIOLATED_W4_' ;;
	world-no-key-dedup) echo '^VIOLATED_W6_' ;;
	world-append-before-replay) echo '^VIOLATED_W8_' ;;
	world-reinvoke-uncertain) echo '^VIOLATED_W9_' ;;
	world-effect-no-gate) echo '^VIOLATED_W10_' ;;
	world-intent-key-without-epoch) echo '^VIOLATED_W9_' ;;
	world-confirm-moves-runway) echo '^VIOLATED_W4_' ;;
	world-band-no-note) echo '^VIOLATED_W11_' ;;
	esac
}
variant_model() { # the model file of a variant
	case "$1" in
	world*) echo "world.pml" ;;
	*) echo "lease.pml" ;;
	esac
}

# pan's summary figures
summarize() { # $1 = pan output file
	local out=$1
	local stored matched trans depth errs elapsed
	stored=$(awk '/states, stored/ {print $1; exit}' "$out")
	matched=$(awk '/states, matched/ {print $1; exit}' "$out")
	trans=$(awk '/transitions \(= stored\+matched\)/ {print $1; exit}' "$out")
	depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$out" | head -1)
	errs=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$out" | head -1)
	elapsed=$(sed -n 's/^pan: elapsed time \([0-9.e+]*\) seconds.*/\1/p' "$out" | head -1)
	echo "  states stored: ${stored:-?}, matched: ${matched:-?}, transitions (explored): ${trans:-?}"
	echo "  depth reached: ${depth:-?}, errors: ${errs:-?}, pan elapsed: ${elapsed:-?} s"
}

run_variant() { # $1 = variant; returns 0 when the variant behaves as expected
	local v=$1 defs
	if ! defs=$(variant_defs "$v"); then
		echo "check.sh: unknown variant '$v'" >&2
		return 2
	fi
	defs="$defs $extra"
	local dir mf
	mf=$(variant_model "$v")
	dir=$(mktemp -d "${TMPDIR:-/tmp}/leasehold-model-$v.XXXXXX")
	cp "$here/$mf" "$dir/$mf"
	# A bug variant's breadth-first search stops at its first counterexample
	# (at most a few hundred thousand states): gcc -O1 compiles pan.c in half
	# the time of -O2 and the search runs about as fast, so the 19 planted
	# bugs cost ~15 CPU seconds less. The exhaustive searches keep -O2.
	# world-effects-revoke stores 25,134,197 states: in -w24's 16.8M hash
	# slots they chain; -w26 (+384 MB) stores the same states in 10% less
	# CPU (95 s against 106 s, alternated in one sitting).
	local w=$hash_w
	[ "$v" = world-effects-revoke ] && [ -z "${PAN_MEM_HASH:-}" ] && w=26
	# -DNOCOMP stores each state vector as it is instead of compressed
	# (the same states, searched the same way: only the store's layout
	# differs): world-effects 50 s → 39 s of CPU for 2.1 → 2.6 GB. Not for
	# world-effects-revoke, whose 25M states would take 5.4 GB for 4 %.
	local comp=-DNOCOMP
	[ "$v" = world-effects-revoke ] && comp=
	local is_bug=0 opt=-O2 cflags="-DSAFETY $comp" panflags="-m200000 -w$w"
	case "$v" in correct | cover | fenced-reconcile | world | world-cover | world-effects | world-effects-cover | world-effects-revoke | world-keeper | world-keeper-cover | world-band) ;; *) is_bug=1 opt=-O1 cflags="-DSAFETY -DBFS $comp" panflags="-w$w" ;; esac

	echo "=== $v: spin -a $(echo $defs) $mf && gcc $opt $cflags -o pan pan.c && ./pan $panflags"
	local start end
	start=$(date +%s.%N)
	(
		cd "$dir" &&
			spin -a $defs "$mf" >spin.out 2>&1 &&
			gcc $opt -w $cflags -o pan pan.c >gcc.out 2>&1
	) || {
		echo "  FAIL: spin -a or gcc failed:"
		cat "$dir/spin.out" "$dir/gcc.out" 2>/dev/null | head -40
		[ "${KEEP:-}" = 1 ] || rm -rf "$dir"
		return 1
	}
	(cd "$dir" && ./pan $panflags >pan.out 2>&1)
	end=$(date +%s.%N)
	local wall
	wall=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}')
	summarize "$dir/pan.out"
	echo "  wall time (spin + gcc + pan): ${wall} s"

	local errs ok=0
	errs=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.out" | head -1)
	if [ -z "$errs" ]; then
		echo "  FAIL: pan did not report (see below)"
		tail -20 "$dir/pan.out"
		ok=1
	elif [ $is_bug = 0 ]; then
		if [ "$errs" != 0 ]; then
			echo "  FAIL: $errs error(s) in the $v model:"
			grep -E 'assertion violated|invalid end state \(' "$dir/pan.out" | head -5
			(cd "$dir" && spin -t $defs "$mf" 2>&1 | grep -v '^[[:space:]]*$' | head -200)
			ok=1
		elif grep -qE 'Search not completed|max search depth too small' "$dir/pan.out"; then
			echo "  FAIL: the search was not exhaustive:"
			grep -E 'Search not completed|max search depth too small' "$dir/pan.out"
			ok=1
		fi
		if [ $ok = 0 ] && case "$v" in cover | *-cover) true ;; *) false ;; esac; then
			# every statement but the VIOLATED branches of CHECK (printf,
			# assert) and the processes' unreachable ends must be reached
			local unreached
			unreached=$(sed -n '/^unreached in/,$p' "$dir/pan.out" |
				grep -E "^[[:space:]]+${mf%.pml}\\.pml:[0-9]+, state" |
				grep -vE "printf\('\\\\n'\)|\"assert\(|\"-end-\"" || true)
			if [ -n "$unreached" ]; then
				echo "  FAIL: reachable-code check: statements never reached:"
				echo "$unreached"
				ok=1
			else
				echo "  every statement is reached except the VIOLATED branches: no property is vacuous"
			fi
		fi
		[ $ok = 0 ] && echo "  PASS: $v: 0 errors, exhaustive"
	else
		if [ "$errs" = 0 ]; then
			echo "  FAIL: the planted variant $v produced no counterexample"
			ok=1
		else
			local narration first expect
			narration=$(cd "$dir" && spin -t $defs "$mf" 2>&1)
			first=$(printf '%s\n' "$narration" | grep -oE 'VIOLATED_[A-Za-z0-9_]+' | head -1)
			expect=$(variant_expect "$v")
			grep -E 'assertion violated' "$dir/pan.out" | head -1 | sed 's/^/  /'
			echo "  counterexample violates: ${first:-?}"
			echo "  --- trail, as the model narrates it (spin -t):"
			printf '%s\n' "$narration" | sed -n '1,/^spin: trail ends/p' |
				grep -vE '^[[:space:]]*$|^spin: (text of failed|.*value .* truncated)' | sed 's/^[[:space:]]*/    /; s/[[:space:]]*$//'
			echo "  --- trail, one line per step (spin -t -p):"
			(cd "$dir" && spin -t -p $defs "$mf" >trail.txt 2>&1)
			awk '/^[[:space:]]*[0-9]+:[[:space:]]+proc/ { n = $1; if (n != last) { print "    " $0; last = n } }' "$dir/trail.txt" |
				sed 's/[[:space:]][[:space:]]*/ /g; s/^ */    /' | cut -c1-170 | head -120
			if [ -z "$first" ] || ! printf '%s\n' "$first" | grep -qE "$expect"; then
				echo "  FAIL: expected a violation matching $expect, got ${first:-none}"
				ok=1
			else
				echo "  PASS: $v: counterexample found (${first})"
			fi
		fi
	fi
	if [ "${KEEP:-}" = 1 ]; then
		echo "  kept: $dir"
	else
		rm -rf "$dir"
	fi
	return $ok
}

variants=("$@")
[ ${#variants[@]} -eq 0 ] && variants=(correct)
if [ "${variants[0]}" = all ]; then
	variants=(correct cover no-fence-complete drain-revives runway-from-answer no-gate silent-rerun bad-timing limit-zombie-double world world-cover world-bugs world-effects world-effects-cover world-effects-revoke world-keeper world-keeper-cover world-band)
fi
expanded=()
for v in "${variants[@]}"; do
	if [ "$v" = world-bugs ]; then
		expanded+=(world-no-epoch-check world-adopt-old-epoch world-renew-revives world-sim-readopt world-no-key-dedup world-append-before-replay world-reinvoke-uncertain world-effect-no-gate world-intent-key-without-epoch world-confirm-moves-runway world-band-no-note)
	else
		expanded+=("$v")
	fi
done
variants=("${expanded[@]}")

status=0
failed=()
for v in "${variants[@]}"; do
	if ! run_variant "$v"; then
		status=1
		failed+=("$v")
	fi
done
if [ $status = 0 ]; then
	echo "RESULT: all as expected (${variants[*]})"
else
	echo "RESULT: FAILED: ${failed[*]}"
fi
exit $status
