/*
 * lease.pml — a Promela model of Leasehold's run lease protocol (SPEC §1–§3,
 * §5; docs/design/fencing.md §6–§7), checked exhaustively with spin.
 * Run it with model/check.sh; model/README.md explains it.
 *
 * ===========================================================================
 * BOUNDS — what the exhaustive check covers
 * ===========================================================================
 *   - One run and one effect key on it; NH = 2 holders (worker processes),
 *     each with a keeper entry, a drain, a watchdog and a handler that makes
 *     one effect (Run.Effect) and then completes (or fails).
 *   - Timing in store-clock units: T_LEASE = 5, T_RENEW = 1, T_DRAIN = 1,
 *     D_STOP = 3, S = 1, margin = T_DRAIN = 1, declared effect duration
 *     MAXDUR = 1, so need = MAXDUR + margin = 2. They pass lease/validate.go
 *     (Timing.Validate): D_STOP + S = 4 < 5 = T_LEASE and
 *     T_RENEW + T_DRAIN = 2 < 3 = D_STOP; and lease/effect.go (MaxEffect):
 *     MAXDUR = 1 <= min(T_LEASE - S - T_RENEW - T_DRAIN, D_STOP - margin) = 2.
 *     These are the smallest integers that pass the validation with S >= 1.
 *   - Time is UNBOUNDED: each clock value is kept relative to the store's now
 *     and saturated where no guard can tell larger values apart
 *     (rem = expires_at - now, at least 0; age = now - send, at most T_LEASE;
 *     every comparison in the protocol is between such a difference and a
 *     constant <= T_LEASE), so the finite state space covers every schedule
 *     of every length.
 *   - Claims stop once the fence reaches MAXF = 3 (each claim and each
 *     reclaim adds one: at most two claims with a reclaim between them, or
 *     three with failed attempts between them); each holder crashes at most
 *     MAXINC times (default 1) and restarts as a new owner.
 *   - Network: the store applies a request at the instant it is sent — the
 *     tightest case for every property, since a holder counts its runway from
 *     the send and a later apply only moves the expiry later — and its answer
 *     is delivered after any delay, or lost (the write stands, the caller
 *     times out). A lost request is a write never made, i.e. a holder that
 *     did not send, which the model already allows. A holder has at most one
 *     call outstanding.
 *   - Holder clock: the store clock may run ahead of it by up to S within a
 *     term; each reading the holder takes has its own error d in [0, S] (an
 *     over-approximation of the rate bound). A holder clock running ahead of
 *     the store's only stops it earlier (the safe direction) and is left out.
 *
 * ===========================================================================
 * WHAT "PAUSED" MEANS
 * ===========================================================================
 *   Outside its gate-to-call window a holder may be delayed arbitrarily: the
 *   model never forces it to move, and the clock advances regardless. Inside
 *   the window (the gate passed, fn not called yet) an unpaused holder is
 *   timely: the clock advances at most `margin` units before it calls fn
 *   ("the margin covers the intent's round trip between the gate and fn",
 *   scheduler/run.go). A *pause* there (a GC stop, a SIGSTOP, a slow intent
 *   round trip) is an explicit step that lifts this bound; it is recorded
 *   (pzg) for the properties that exempt paused holders.
 *
 * ===========================================================================
 * PROPERTIES — assertions; a violation first prints VIOLATED_<name>
 * ===========================================================================
 *   P1  fence-current-at-commit: every accepted fenced write (drain renewal,
 *       complete, fail, effect intent, effect commit, effect resolve) names
 *       the fence current in the store when it commits, the run running.
 *   P2  no-effect-on-expired-lease: when a holder that passed the gate and has
 *       not paused since calls the effect function, the store holds the run
 *       running under the caller's fence with expires_at >= now + MAXDUR:
 *       the whole declared effect fits inside the unexpired lease.
 *   P2w the witness refuses a (lower) token only from a holder that paused
 *       between gate and call. (That it never accepts a lower token after a
 *       higher one is its construction, internal/witness/witness.go.)
 *   P3a the k-th invocation of the key comes after at least k-1 uncertain
 *       reports (a new intent needs the old one resolved, a resolve needs an
 *       uncertain report, and a committed effect is never re-run).
 *   P3b between two invocations by holders that did not pause between gate
 *       and call there is an uncertain report (the simulator's InvOnce).
 *   P3c the witness accepts at most one invocation of the key from holders
 *       that did not pause between gate and call.
 *   P4  belief-implies-lease: a holder whose keeper entry is live and whose
 *       runway is positive under the most generous reading of its clock
 *       (sent + T_LEASE - now > 0 in store time) holds the store's current
 *       lease: the run is running under its fence, expires_at > now.
 *   P4b hence at most one holder believes it holds a live lease.
 *   P4r no-live-holder-reclaimed: when the reclaimer takes fence f, every
 *       holder still keeping f is past its self-stop point by any reading of
 *       its clock (now - sent >= D_STOP + S): it can no longer act.
 *   P5  expiry-is-absorbing: once a running lease has expires_at <= now on
 *       the store clock it stays expired until the run leaves 'running': no
 *       renewal revives it, so the reclaimer always finds it (the recovery
 *       bound T_lease + P + S rests on this).
 *
 *   Planted bugs — each must give a counterexample (check.sh):
 *   BUG_NO_FENCE_COMPLETE   complete WHERE id AND state = 'running' (no fence)
 *   BUG_DRAIN_REVIVES       the drain's WHERE without expires_at > now
 *   BUG_RUNWAY_FROM_ANSWER  runway counted from the answer, not the send
 *   BUG_NO_GATE             fn called without the runway gate
 *   BUG_SILENT_RERUN        RunEffectBegin takes over an older fence's
 *                           uncommitted intent instead of reporting uncertain
 *   -DD_STOP=5              a timing Timing.Validate refuses (D_stop + S >
 *                           T_lease): a holder may still act when reclaimed
 *   A known limit, shown rather than hidden:
 *   LIMIT_ZOMBIE_DOUBLE     asserts that the witness accepts at most one
 *                           invocation of the key from anyone: false when a
 *                           holder pauses between its intent and fn while the
 *                           next holder reconciles with witness.Has.
 *   FENCED_RECONCILE        the remedy: the reconcile query carries the
 *                           asker's token and the downstream raises its floor
 *                           to it; with it LIMIT_ZOMBIE_DOUBLE holds.
 */

/* ---------------------------------------------------------------- bounds */
#ifndef MAXF
#define MAXF 3
#endif
#ifndef MAXINC
#define MAXINC 1
#endif
#define NH 2

/* --------------------------------------------------------------- timing */
#define T_LEASE 5
#define T_RENEW 1   /* heartbeat Renew() period; the drain may run at any time here */
#define T_DRAIN 1
#ifndef D_STOP
#define D_STOP  3   /* check.sh bad-timing overrides it */
#endif
#define S       1
#define MARGIN  T_DRAIN                /* the gate's margin defaults to T_drain */
#define MAXDUR  1
#define NEED    (MAXDUR + MARGIN)      /* keeper/decide.go Needed */
#define AGEMAX  T_LEASE                /* ages saturate here */

/* ----------------------------------------------------------- run states */
#define AVAILABLE 0
#define RUNNING   1
#define COMPLETED 2

/* holder phases (scheduler/worker.go fetchLoop / work) */
#define IDLE     0   /* holds nothing */
#define CLAIMING 1   /* RunClaim sent, no answer yet */
#define HOLD     2   /* claimed: keeper entry added, handler running */

/* handler steps (scheduler/run.go Run.Effect, then worker.go finish) */
#define E_START   0  /* about to call Run.Effect: the gate next */
#define E_GATED   1  /* gate passed; RunEffectBegin next */
#define E_INTENT  2  /* intent inserted under my fence; fn next */
#define E_INVOKED 3  /* fn returned; RunEffectCommit next */
#define E_UNC     4  /* got UncertainEffectError: reconcile and resolve next */
#define E_DONE    5  /* the handler returns nil: complete next */
#define E_FAIL    6  /* the handler returns an error: fail next */

/* a holder's outstanding call */
#define NONE 0
#define REP  1   /* applied; the answer is in flight */
#define LOST 2   /* applied; the answer was lost: the call times out */
#define K_CLAIM 1
#define K_DRAIN 2

/* ---------------------------------------------------------------- state */
/* The store of record: the run's row (runs) and the effect's (run_effects).
 * runs.owner is not kept: each fence is handed to exactly one incarnation
 * (the claim's answer), so the drain's `owner = $o` term is implied here by
 * its `fence = $f` term; keeping it would only split states by the name of
 * an owner nobody acts for. */
byte st;            /* runs.state */
byte fence;         /* runs.fence */
byte rem;           /* runs.expires_at - now, at least 0 (0: expired or NULL) */
byte eff_f;         /* run_effects.fence, 0 = no row */
bool eff_c;         /* run_effects.committed */

/* The witness, the downstream system (internal/witness/witness.go). */
byte w_high;        /* highest accepted token, 0 = none; Has() = w_high > 0 */
#ifdef FENCED_RECONCILE
bool w_has;         /* an invocation was accepted (Has); w_high also counts reconcile tokens */
#define HAS (w_has)
#else
#define HAS (w_high > 0)
#endif

/* Ghosts, read only by the properties. */
byte budget = 1;    /* P3a: 1 + uncertain reports - invocations (saturating at 2) */
byte p3b;           /* P3b: 0 no unpaused invocation yet, 1 one and no report since, 2 a report since */
bool accup;         /* P3c: the witness accepted an unpaused invocation */
bool dead;          /* P5: the running lease has been seen expired */

/* The holders. */
byte hs[NH];        /* IDLE / CLAIMING / HOLD */
byte ef[NH];        /* handler step */
bool live[NH];      /* keeper entry live (keeper/entry.go state == live) */
byte age[NH];       /* now - send of its last confirmed expiry-setting write */
byte myf[NH];       /* the fence its claim returned */
byte inc[NH];       /* crashes so far */
bool pzg[NH];       /* paused since its gate passed */
byte win[NH];       /* clock ticks since its gate passed (while unpaused) */

/* A holder's outstanding call. */
byte net[NH];       /* NONE / REP / LOST */
byte nk[NH];        /* K_CLAIM / K_DRAIN */
byte nf[NH];        /* the fence the claim got */
bool nok[NH];       /* the answer: claimed / renewed (returned) */
byte sage[NH];      /* now - send of the call, while its answer is in flight */

/* Every transition is one STEP: a d_step (one indivisible, deterministic
 * transition). check.sh cover compiles them as atomic instead, so that spin
 * reports every statement no run reaches: only the VIOLATED branches may be
 * left (the properties are not vacuous). */
#ifdef COVER
#define STEP atomic
#else
#define STEP d_step
#endif

/* ------------------------------------------------------- the properties */
#define CHECK(name, c) if :: !(c) -> printf(#name); printf("\n"); assert(c) :: else -> skip fi

/* P1, in every store step that accepts a fenced write naming wf */
#define P1(wf) CHECK(VIOLATED_P1_fence_current_at_commit, st == RUNNING && (wf) == fence)

/* P4: the most generous reading of holder i's clock is store now - S, so its
 * largest runway is sent + T_LEASE - S - (now - S) = T_LEASE - age. */
#define BELIEVES(i) (live[i] && age[i] < T_LEASE)
#define P4(i) CHECK(VIOLATED_P4_belief_implies_lease, !BELIEVES(i) || (st == RUNNING && fence == myf[i] && rem > 0))

/* The state invariants, evaluated at the end of every step that can change
 * what they read (the clock, the store, a holder's confirmation). */
inline inv() {
	P4(0);
	P4(1);
	CHECK(VIOLATED_P4b_at_most_one_believer, !(BELIEVES(0) && BELIEVES(1)));
	CHECK(VIOLATED_P5_expiry_is_absorbing, !(dead && st == RUNNING && rem > 0));
	dead = (st == RUNNING && (dead || rem == 0))
}

/* ------------------------------------------------------------ the clock */
/* Holder i is in its gate-to-call window. */
#define INWIN(i) (hs[i] == HOLD && (ef[i] == E_GATED || ef[i] == E_INTENT))
/* The clock may not advance past the margin of an unpaused holder's window. */
#define TICK_OK(i) (!(INWIN(i) && !pzg[i] && win[i] >= MARGIN))

inline tick(i) {
	if
	:: live[i] && age[i] < AGEMAX -> age[i]++
	:: else -> skip
	fi;
	if
	:: net[i] == REP && sage[i] < AGEMAX -> sage[i]++
	:: else -> skip
	fi;
	if
	:: INWIN(i) && !pzg[i] -> win[i]++
	:: else -> skip
	fi
}

/* The store clock advances one unit. */
active proctype Clock() {
end:
	do
	:: STEP {
		TICK_OK(0) && TICK_OK(1) ->
		if
		:: rem > 0 -> rem--
		:: else -> skip
		fi;
		tick(0);
		tick(1);
		printf("  clock +1: lease rem %d; H0 age %d; H1 age %d\n", rem, age[0], age[1]);
		inv()
	}
	od
}

/* -------------------------------------------------------- the reclaimer */
#define P4R(i) CHECK(VIOLATED_P4r_no_live_holder_reclaimed, !(live[i] && myf[i] == fence && age[i] < D_STOP + S))

/* driver/sqlite/runs_reclaim.go runReclaimSQL, driver/postgres/runs_claim.go
 * reclaimRuns (scheduler/reclaimer.go, every P, on every replica):
 *   UPDATE runs SET state = 'available', fence = fence + 1, owner = '',
 *     expires_at = NULL WHERE state = 'running' AND expires_at <= now
 * Here: at any moment. */
active proctype Reclaimer() {
end:
	do
	:: STEP {
		st == RUNNING && rem == 0 ->
		P4R(0);
		P4R(1);
		st = AVAILABLE; fence++; rem = 0;
		printf("reclaimer: expired lease reclaimed, fence now %d\n", fence);
		inv()
	}
	od
}

/* ------------------------------------------------------------ the network */
inline clear_call(i) {
	net[i] = NONE; nk[i] = 0; nf[i] = 0; nok[i] = 0; sage[i] = 0
}

/* The answer to holder i's call is lost: the write stands, the caller's
 * context times out (DrainOnce's fctx of D_stop; RunClaim's ctx). */
proctype Net(byte i) {
end:
	do
	:: STEP { net[i] == REP -> net[i] = LOST; sage[i] = 0; printf("net: H%d's answer lost\n", i) }
	od
}

/* ------------------------------------------------------------- a holder */
/* keeper/keeper.go Keeper.Release: the entry is gone, never flushed again;
 * the handler's state is forgotten; the holder may claim again. */
inline release(i) {
	live[i] = 0; hs[i] = IDLE; ef[i] = E_START; myf[i] = 0; age[i] = 0;
	pzg[i] = 0; win[i] = 0
}

/* The gate, keeper/decide.go GatePasses: min(runway, D_STOP - lag) >= NEED
 * with lag = max(0, now_h - sent) (decide.go Lag) and runway =
 * T_LEASE - lag - S (decide.go Runway); now_h is the holder's clock reading,
 * store now - d for some d in [0, S]. Rearranged (both right-hand sides are
 * >= 0, as lease/effect.go MaxEffect guarantees for a declarable effect, so
 * no saturation is needed): age - d <= T_LEASE - S - NEED and
 * age - d <= D_STOP - NEED. Passable when it passes with d = S; refusable
 * when it fails with d = 0. */
#define AVAIL_OK(i, d) (age[i] <= (d) + (T_LEASE - S - NEED) && age[i] <= (d) + (D_STOP - NEED))
#ifdef BUG_NO_GATE
#define GATE_PASS(i)  true
#define GATE_SHORT(i) false
#else
#define GATE_PASS(i)  AVAIL_OK(i, S)
#define GATE_SHORT(i) (!AVAIL_OK(i, 0))
#endif

/* P3 bookkeeping */
inline uncertain_reported() {
	if :: budget < 2 -> budget++ :: else -> skip fi;
	if :: p3b == 1 -> p3b = 2 :: else -> skip fi
}

proctype Holder(byte i) {
end:
	do
	/* ------------------------------------------------------- faults */
	:: STEP {
		/* crash: the process dies and restarts as a new owner id, its memory
		 * lost; an answer still in flight to it is discarded */
		inc[i] < MAXINC ->
		inc[i]++;
		clear_call(i);
		release(i);
		printf("H%d crashes and restarts as a new owner\n", i);
		inv()
	}
	:: STEP {
		/* pause between the gate and fn (GC, SIGSTOP, a slow intent round
		 * trip): the margin no longer bounds the window */
		INWIN(i) && !pzg[i] -> pzg[i] = 1; win[i] = 0;
		printf("H%d pauses between its gate and fn\n", i)
	}

	/* ------------------------------- claim: scheduler/worker.go fetchLoop */
	:: STEP {
		/* sent := Clock.Now(); RunClaim(...) — runway counts from this send.
		 * driver/sqlite/runs_claim.go runClaimSQL, driver/postgres/
		 * runs_claim.go claimRuns:
		 *   UPDATE runs SET state = 'running', owner = $o, fence = fence + 1,
		 *     attempt = attempt + 1, expires_at = now + T_lease
		 *   WHERE state = 'available' (picked under BEGIN IMMEDIATE /
		 *   FOR UPDATE SKIP LOCKED)
		 * Bound: no claim once fence >= MAXF (nor of a completed run). */
		hs[i] == IDLE && net[i] == NONE && st != COMPLETED && fence < MAXF ->
		if
		:: st == AVAILABLE ->
			fence++; st = RUNNING; rem = T_LEASE;
			nok[i] = 1; nf[i] = fence
		:: else -> nok[i] = 0
		fi;
		net[i] = REP; nk[i] = K_CLAIM; sage[i] = 0; hs[i] = CLAIMING;
		printf("H%d claims: %d (fence %d, lease rem %d); answer in flight\n", i, nok[i], fence, rem);
		inv()
	}
	:: STEP {
		/* the answer: worker.go work → keeper/keeper.go Keeper.Add(ref, claimSent) */
		hs[i] == CLAIMING && net[i] != NONE ->
		if
		:: net[i] == REP && nok[i] ->
			hs[i] = HOLD; ef[i] = E_START; live[i] = 1; myf[i] = nf[i];
#ifdef BUG_RUNWAY_FROM_ANSWER
			age[i] = 0;
#else
			age[i] = sage[i];
#endif
			printf("H%d gets its claim: fence %d, runway age %d (store lease rem %d)\n", i, myf[i], age[i], rem)
		:: else -> hs[i] = IDLE;     /* nothing claimable, or the call failed */
			printf("H%d: claim got nothing or timed out\n", i)
		fi;
		clear_call(i);
		inv()
	}

	/* ---------------------------------- keeper drain: keeper/drain.go DrainOnce */
	:: STEP {
		/* the heartbeat's Renew() made the entry dirty; sent := k.now();
		 * Flusher.Flush(refs) = worker.go flush → RunRenewMany:
		 * driver/postgres/runs_renew_many.go renewRuns,
		 * driver/sqlite/runs_renew_many.go runRenewChunkSQL:
		 *   UPDATE runs SET expires_at = now + T_lease
		 *   WHERE fence = $f AND owner = $o AND state = 'running'
		 *     AND expires_at > now      -- clock_timestamp() after the lock
		 *   RETURNING id
		 * It writes only expires_at: never a fence; it never revives. */
		live[i] && net[i] == NONE ->
		if
#ifdef BUG_DRAIN_REVIVES
		:: fence == myf[i] && st == RUNNING ->
#else
		:: fence == myf[i] && st == RUNNING && rem > 0 ->
#endif
			P1(myf[i]);
			rem = T_LEASE; nok[i] = 1
		:: else -> nok[i] = 0    /* not returned: the lease is lost */
		fi;
		net[i] = REP; nk[i] = K_DRAIN; sage[i] = 0;
		printf("H%d drains fence %d: renewed %d (lease rem %d)\n", i, myf[i], nok[i], rem);
		inv()
	}
	:: STEP {
		nk[i] == K_DRAIN && net[i] != NONE ->
		if
		:: net[i] == REP && nok[i] && live[i] ->
			/* returned: advance(&e.drainSent, sent) — the send, never the answer */
#ifdef BUG_RUNWAY_FROM_ANSWER
			age[i] = 0
#else
			if :: sage[i] < age[i] -> age[i] = sage[i] :: else -> skip fi;
#endif
			printf("H%d: drain confirmed, runway age %d\n", i, age[i])
		:: net[i] == REP && !nok[i] ->
			/* not returned: drainLost → giveUp (cancels the holder); never flushed again */
			live[i] = 0; age[i] = 0;
			printf("H%d: drain did not return its lease: lost\n", i)
		:: else -> skip   /* failed flush (or the entry is gone): retried with backoff */
		fi;
		clear_call(i);
		inv()
	}

	/* ---------- keeper self-stop: keeper/watchdog.go WatchOnce (decide.go MustStop) */
	:: STEP {
		/* lag >= D_STOP on the holder's clock: possible once now - sent >= D_STOP (d = 0) */
		live[i] && age[i] >= D_STOP -> live[i] = 0; age[i] = 0;
		printf("H%d self-stops (lag >= D_stop)\n", i)
	}

	/* ---------------------------------- handler: scheduler/run.go Run.Effect */
	:: STEP {
		/* keeper/gate.go Entry.Gate → decide.go GatePasses: passes */
		hs[i] == HOLD && ef[i] == E_START && live[i] && GATE_PASS(i) ->
		ef[i] = E_GATED; win[i] = 0; pzg[i] = 0;
		printf("H%d: gate passes (age %d)\n", i, age[i])
	}
	:: STEP {
		/* Entry.Gate refuses: the entry is gone (e.Err()), or short of
		 * runway → gateSlow → *RunwayError, giveUp: the run stops */
		hs[i] == HOLD && ef[i] == E_START && (!live[i] || GATE_SHORT(i)) ->
		live[i] = 0; age[i] = 0; ef[i] = E_FAIL;
		printf("H%d: gate refuses\n", i)
	}
	:: STEP {
		/* RunEffectBegin — driver/sqlite/effects.go (requireHeld,
		 * effectSelectSQL, effectInsertIntentSQL), driver/postgres/effects.go
		 * beginEffect: the run held = fence = $f AND state = 'running'; a row
		 * found is never modified: committed → its stored result (fn not
		 * called); an intent without a commit → uncertain. */
		hs[i] == HOLD && ef[i] == E_GATED ->
		if
		:: st == RUNNING && fence == myf[i] ->
			if
			:: eff_f == 0 ->
				P1(myf[i]);
				eff_f = myf[i]; eff_c = 0; ef[i] = E_INTENT;
				printf("H%d: effect intent inserted under fence %d\n", i, myf[i])
			:: eff_f != 0 && eff_c -> ef[i] = E_DONE; win[i] = 0;
				printf("H%d: effect already committed: stored result\n", i)
			:: eff_f != 0 && !eff_c ->
#ifdef BUG_SILENT_RERUN
				/* the bug: an older fence's intent is taken over, fn re-run */
				eff_f = myf[i]; ef[i] = E_INTENT;
				printf("H%d: takes over the uncommitted intent (BUG_SILENT_RERUN)\n", i)
#else
				/* scheduler/run.go *UncertainEffectError to the handler */
				uncertain_reported();
				ef[i] = E_UNC; win[i] = 0;
				printf("H%d: effect uncertain (intent under fence %d)\n", i, eff_f)
#endif
			fi
		:: else -> ef[i] = E_FAIL; win[i] = 0;   /* ErrFenced */
			printf("H%d: effect begin fenced out\n", i)
		fi
	}
	:: STEP {
		/* fn(fctx, EffectToken{Fence, IdempotencyKey}) calls the downstream
		 * (the witness: Invoke refuses a fence < the highest accepted) */
		hs[i] == HOLD && ef[i] == E_INTENT ->
		printf("H%d calls fn with token %d (paused since gate: %d; store: state %d fence %d rem %d; witness highest %d)\n",
			i, myf[i], pzg[i], st, fence, rem, w_high);
		if
		:: !pzg[i] ->
			CHECK(VIOLATED_P2_no_effect_on_expired_lease, st == RUNNING && fence == myf[i] && rem >= MAXDUR);
			CHECK(VIOLATED_P3b_second_invocation_only_after_uncertain, p3b != 1);
			p3b = 1
		:: else -> skip
		fi;
		CHECK(VIOLATED_P3a_kth_invocation_after_k_minus_1_uncertain, budget > 0);
		if :: budget > 0 -> budget-- :: else -> skip fi;
		if
		:: myf[i] >= w_high ->
#ifdef LIMIT_ZOMBIE_DOUBLE
			CHECK(VIOLATED_LIMIT_one_accepted_invocation, !HAS);
#endif
			w_high = myf[i];
#ifdef FENCED_RECONCILE
			w_has = 1;
#endif
			if
			:: !pzg[i] ->
				CHECK(VIOLATED_P3c_one_accepted_unpaused_invocation, !accup);
				accup = 1
			:: else -> skip
			fi;
			ef[i] = E_INVOKED
		:: else ->
			CHECK(VIOLATED_P2w_witness_refuses_only_paused, pzg[i]);
			ef[i] = E_FAIL       /* fn returns the downstream's refusal */
		fi;
		win[i] = 0; pzg[i] = 0
	}
	:: STEP {
		/* RunEffectCommit — driver/sqlite/effects_stmts.go effectCommitSQL,
		 * driver/postgres/effects_settle.go commitEffect:
		 *   WHERE key AND fence = $f AND committed = 0 AND the run is held
		 *   under $f (fence = $f AND state = 'running') */
		hs[i] == HOLD && ef[i] == E_INVOKED ->
		if
		:: eff_f == myf[i] && !eff_c && st == RUNNING && fence == myf[i] ->
			P1(myf[i]);
			eff_c = 1; ef[i] = E_DONE;
			printf("H%d: effect committed\n", i)
		:: else -> ef[i] = E_FAIL;    /* the intent stays: uncertain for the next holder */
			printf("H%d: effect commit fenced out\n", i)
		fi
	}
	:: STEP {
		/* reconcile — ask the downstream with the idempotency key
		 * (witness.Has, as sim/proc.go does) — then Run.ResolveEffect →
		 * RunEffectResolve — driver/sqlite/effects_stmts.go
		 * effectResolveCommitSQL / effectResolveDeleteSQL, driver/postgres/
		 * effects_settle.go resolveCommitted / resolveNotDone:
		 *   WHERE key AND committed = 0 AND the run is held under $f
		 * One step: the downstream is asked at the resolve's commit, the
		 * latest moment it can be; asking earlier only widens the window of
		 * LIMIT_ZOMBIE_DOUBLE. */
		hs[i] == HOLD && ef[i] == E_UNC ->
#ifdef FENCED_RECONCILE
		/* the remedy for LIMIT_ZOMBIE_DOUBLE: the query carries the asker's
		 * token and the downstream raises its floor to it */
		if :: myf[i] > w_high -> w_high = myf[i] :: else -> skip fi;
#endif
		if
		:: eff_f != 0 && !eff_c && st == RUNNING && fence == myf[i] ->
			P1(myf[i]);
			if
			:: HAS -> eff_c = 1; eff_f = myf[i]; ef[i] = E_DONE;   /* it happened */
				printf("H%d: reconciled: happened; resolved committed\n", i)
			:: else -> eff_f = 0; ef[i] = E_START;    /* it did not: Run.Effect again, the gate again */
				printf("H%d: reconciled: did not happen; intent deleted\n", i)
			fi
		:: else -> ef[i] = E_FAIL;
			printf("H%d: resolve fenced out\n", i)
		fi
	}
	:: STEP {
		/* the handler sees its context cancelled (lost, self-stopped) and
		 * returns the error — or carries on: fn may ignore its ctx */
		hs[i] == HOLD && !live[i] && ef[i] != E_DONE && ef[i] != E_FAIL ->
		ef[i] = E_FAIL; win[i] = 0; pzg[i] = 0;
		printf("H%d: handler returns its context's error\n", i)
	}

	/* ------------------------------------- finish: scheduler/worker.go finish */
	:: STEP {
		/* the handler returned nil → completer → driver/sqlite/runs_fenced.go
		 * runCompleteSQL, driver/postgres/runs_write.go completeRun
		 * (batched: runs_complete_many.go):
		 *   UPDATE runs SET state = 'completed', owner = '', expires_at = NULL
		 *   WHERE id = $id AND fence = $f AND state = 'running'
		 * Accepted also after expiry while nobody has reclaimed. */
		hs[i] == HOLD && ef[i] == E_DONE ->
		if
#ifdef BUG_NO_FENCE_COMPLETE
		:: st == RUNNING ->
#else
		:: st == RUNNING && fence == myf[i] ->
#endif
			P1(myf[i]);
			printf("H%d: complete under fence %d accepted (store fence %d)\n", i, myf[i], fence);
			st = COMPLETED; rem = 0
		:: else -> skip;              /* ErrFenced: the result is discarded */
			printf("H%d: complete fenced out\n", i)
		fi;
		release(i);
		inv()
	}
	:: STEP {
		/* the handler's error → driver/sqlite/runs_fenced.go runFailSQL,
		 * driver/postgres/runs_write.go failRun: back to 'available' for a
		 * retry, WHERE id = $id AND fence = $f AND state = 'running' */
		hs[i] == HOLD && ef[i] == E_FAIL ->
		if
		:: st == RUNNING && fence == myf[i] ->
			P1(myf[i]);
			printf("H%d: fail under fence %d accepted: run available again\n", i, myf[i]);
			st = AVAILABLE; rem = 0
		:: else -> skip;
			printf("H%d: fail fenced out\n", i)
		fi;
		release(i);
		inv()
	}
	od
}

init {
	atomic {
		run Net(0); run Net(1);
		run Holder(0); run Holder(1)
	}
}
