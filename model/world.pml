/*
 * world.pml — a Promela model of the WORLD lease (SPEC §4; docs/design/
 * fencing.md §1–§3): the lease inside the journal, its grants, renewals,
 * handoffs both ways (H0 → H1 and H1 → H0), the expiry sweep and the append
 * rule, with two holders that crash (restarting under the SAME name: the ABA
 * case the epoch must stop) and pause. Checked exhaustively with spin by
 * model/check.sh (variants world, world-*); model/README.md explains it.
 * Two compile-time extensions, each its own variant: -DEFFECTS (command K's
 * side effect E through the journal as its ledger, host/effects.go: W9,
 * W10; check.sh world-effects) and -DKEEPER (the world keeper's drains that
 * only confirm the lease beside those that extend it, host/keeper.go;
 * check.sh world-keeper).
 *
 * ===========================================================================
 * BOUNDS
 * ===========================================================================
 *   - One world; NH = 2 holders, H0 = the world's home (the sweep grants it),
 *     H1 a spill node. Each crashes at most MAXINC (default 1) times and
 *     restarts under the same name with its memory lost.
 *   - Positions: the journal stops growing at MAXPOS (default 5): a write
 *     that would pass it is never applied (the request may still be lost).
 *     Every lease change writes entries (renew 1, handoff 1, grant 1,
 *     revoke 1, sweep 2), so this bounds the number of lease changes and
 *     appends, hence epochs (< MAXPOS). append.rejected entries are not
 *     modelled (they change only the position; omitting them only shifts
 *     positions).
 *   - Operator revokes (PlanRevoke): at most MAXREV (default 1); they are
 *     what makes a PlanGrant possible (a grant only while nobody holds).
 *   - EFFECTS (world-effects) tightens them: MAXPOS 7, MAXREV 0 (no
 *     operator revoke, hence no grant; see W10), and drops the plain turns
 *     and the turns decided on a mirror behind its grant (W1–W8 are checked
 *     with them in the plain variant): the only appends are K's effect's
 *     intents and resolutions and K's turn, all decided on a mirror replayed
 *     to the head. One effect E of one command K; attempts are bounded by
 *     the positions. MAXPOS 7 holds grant, renewal, intent, handoff, the new
 *     holder's renewal, a resolution and K's turn (or a second intent).
 *     (MAXPOS 8: 64,989,328 states, 233 s, 10 GB — past the budget.)
 *     With an operator revoke (world-effects-revoke: -DMAXREV=1, hence
 *     grants) MAXPOS 6: grant, renewal, revoke, grant, renewal, intent —
 *     room for a revoked holder's delayed intent to land after the next
 *     holder's (MAXPOS 7 with a revoke is past the budget: > 18 GB).
 *   - KEEPER (world-keeper) keeps the plain bounds; a confirmation consumes
 *     no position and, writing nothing, is lost rather than orphaned when
 *     its caller times out.
 *   - Timing in store-clock units: T_LEASE 5, S 1. Time is UNBOUNDED: the
 *     store keeps rem = expires_at − now (≥ 0) and the holders ages
 *     now − send (saturated at T_LEASE); every guard compares such a
 *     difference with a constant ≤ T_LEASE.
 *   - Network: every request is applied LATER than it is sent (any delay), or
 *     never; its answer arrives or is lost. A holder has one call
 *     outstanding; when it times out (or crashes) the request stays in the
 *     network in a second slot (one per holder name) and may still land,
 *     after the holder moved on or restarted: at most one such orphaned
 *     request per holder at a time (a second one is lost).
 *   - Store: each request is planned and written in ONE step — the driver
 *     plans on the locked head and its conditional UPDATE re-asserts the
 *     plan's Cond in the same transaction, so the position CAS never fails
 *     here; the step's guard is the plan's refusal rule and Cond.
 *   - Commands: one idempotency key, K. Any turn a holder sends may be K's
 *     (its client submitted or retried it there), any number of times, to
 *     either holder, in any epoch: submissions are unbounded. A K turn is
 *     sent only on a replayed mirror: one decided on a mirror behind its
 *     grant lands, at the store, as such a plain turn (refused: never
 *     written) while K is not journaled, and as a replayed K turn (answered
 *     with K's position) once it is — nothing new. Other turns carry no
 *     key; their contents are not modelled.
 *   - The mirror (host/mirror.go) is abstracted to what the store and W8
 *     compare: at each send the turn was decided either on a mirror
 *     replayed to the head (seen = the head) or on one not yet replayed
 *     through the epoch's grant (seen = a position before it); both are
 *     possible at every send. The store compares seen only with granted
 *     positions, so the head is sent as the newest grant at or before it
 *     (w_gpos): the same answers, fewer states. No mirror position is kept
 *     between steps.
 *
 * ===========================================================================
 * PROPERTIES — assertions; a violation first prints VIOLATED_<name>
 * ===========================================================================
 *   W1  every accepted append carries the epoch and holder current at its
 *       commit (store side: the conditional write; asserted at the append).
 *   W2  positions are totally ordered (each accepted write is head + 1, ...)
 *       and every accepted append lies after its epoch's grant: its position
 *       is greater than the granted_at of its epoch, and the appender has
 *       seen that grant (seen_position ≥ granted_at).
 *   W3  no epoch has two holders: each epoch is started by exactly one
 *       grant / handoff / sweep (epoch + 1, never started twice), it is
 *       adopted by at most one holder GENERATION, and every accepted append
 *       under it comes from that generation.
 *   W4  a holder generation that believes it has runway under epoch e (its
 *       most generous clock reading) holds e on the store: epoch e, holder
 *       it, expires_at > now — unless an operator revoked e (on purpose).
 *   W5  expiry is absorbing: an expired lease is never renewed (no revival)
 *       while its epoch is current.
 *   W6  a command is applied once: the command K (one idempotency key,
 *       submitted and retried to whichever holder a client finds — across
 *       timeouts, lost answers, orphaned requests, handoffs, crashes and
 *       expiry) is journaled at most once; a later append carrying K is
 *       answered with K's first position and writes nothing, in any epoch
 *       and from any holder (the store's key rule, checked before the lease
 *       rule: journal.PlanAppendKeyed; host.Host's turns).
 *   W7  an acknowledged command is journaled: a holder that got K's append
 *       answered OK (and so acknowledged K to its client) finds K in the
 *       journal.
 *   W8  every accepted append was decided on a mirror replayed through its
 *       epoch's grant (the host replays before its first append: a mirror
 *       behind the grant may not have folded the previous holder's last
 *       turns). The store checks the seen_position the holder sends; the
 *       ghost rmok records whether the mirror the turn was decided on had
 *       actually been replayed through the grant.
 *   W9  (EFFECTS) K's side effect E is invoked at most once — the witness,
 *       a ghost counter outside the ledger (the downstream system), counts
 *       E's invocations: ≤ 1 across handoffs, crashes, orphaned requests and
 *       expiry. A holder decides K on a replayed mirror after the runway
 *       check (the gate): no intent (or the last attempt resolved "did not
 *       happen") → it appends a new attempt's intent (fenced like any
 *       append; the store's key rule dedups the intent key, which names the
 *       attempt AND the epoch: fx:<id>:<attempt>:<epoch>), on the intent's
 *       OK answer may invoke E, then sends K's turn (the commit); a pending
 *       intent (no turn, no resolution: uncertain) → it never invokes on its
 *       own: it reconciles (reads the witness) and journals the answer
 *       (host.effect_resolved), then decides again; resolved "happened" → K's
 *       turn without invoking.
 *   W10 (EFFECTS) E is invoked only while its invoker holds the lease live
 *       on the store: epoch, holder, rem > 0 at the invocation step. The
 *       invocation is allowed only while the holder's runway is positive
 *       (the call's context deadline: age < T_LEASE, the most generous
 *       reading) — unless an operator revoked the epoch (on purpose; as
 *       W4). W9 and W10 hold with an operator revoke too (-DMAXREV=1,
 *       check.sh world-effects-revoke) because the intent key carries the
 *       epoch: a revoked holder's delayed intent is a new key, which the
 *       lease rule refuses. Without the epoch in the key it did not hold —
 *       the model's finding (BUG_INTENT_KEY_WITHOUT_EPOCH, model/README.md).
 *       Only within MAXPOS 6: at MAXPOS 8 (-DMAXREV=1 -DMAXINC=0) a
 *       reconciliation under the next epoch ("did not happen") races the
 *       revoked holder's call, answered OK before the revoke, and a second
 *       attempt is invoked → W9 (open; model/README.md).
 *   W4 under KEEPER: a drain that only confirms (epoch, holder, not expired;
 *       writes nothing) does not move the runway's origin: only a confirmed
 *       extension's (renewal's) send does.
 *   W11 (BAND) every handoff the store applies is a band transition
 *       journaled first: a host.band note appended and accepted under the
 *       very epoch the handoff hands off (host/hosted.go handoff: the note
 *       is the holder's last data entry; a renewal may land between). The
 *       holder hands off only after its note's OK answer under its epoch;
 *       a note whose answer is lost, or an epoch lost after the note, makes
 *       it append a new note under the epoch it then holds.
 *
 *   Planted bugs — each must give a counterexample (check.sh world-bugs):
 *   BUG_WORLD_NO_EPOCH_CHECK  the append rule without epoch = current
 *   BUG_ADOPT_OLD_EPOCH       a restarted holder adopts the epoch its
 *                             previous generation held (ABA)
 *   BUG_RENEW_REVIVES         PlanRenew / condUpdate without the expiry check
 *   BUG_NO_KEY_DEDUP          the store appends a key it already holds (a
 *                             retried command applied twice)
 *   BUG_APPEND_BEFORE_REPLAY  the host sends seen = its grant without having
 *                             replayed through it
 *   BUG_REINVOKE_UNCERTAIN    (EFFECTS) the host ignores a pending intent and
 *                             invokes again (a new attempt) → W9
 *   BUG_EFFECT_NO_GATE        (EFFECTS) E invoked without the runway /
 *                             deadline check → W10
 *   BUG_INTENT_KEY_WITHOUT_EPOCH (EFFECTS, MAXREV 1) the intent key
 *                             fx:<id>:<attempt> (the host before the fix):
 *                             the key rule answers a revoked holder's
 *                             delayed intent OK, and it invokes → W9
 *   BUG_CONFIRM_MOVES_RUNWAY  (KEEPER) a confirmation's send is taken as the
 *                             runway's origin → W4
 */

/* ---------------------------------------------------------------- bounds */
#ifdef EFFECTS
/* the effects variant's tighter bounds (see BOUNDS above) */
#ifndef MAXPOS
#define MAXPOS 7
#endif
#ifndef MAXREV
#define MAXREV 0
#endif
#endif
#ifndef MAXPOS
#define MAXPOS 5
#endif
#ifndef MAXINC
#define MAXINC 1
#endif
#ifndef MAXREV
#define MAXREV 1
#endif
#define NH 2
#define HOME 0          /* H0 is the world's home: the sweep grants it */

/* --------------------------------------------------------------- timing */
#define T_LEASE 5
#define S       1
#define AGEMAX  T_LEASE

/* holder names on the store: 0 = nobody (''), i + 1 = holder i */
#define NOBODY 0
#define NAME(i) ((i) + 1)

/* request kinds */
#define R_NONE    0
#define R_RENEW   1
#define R_APPEND  2
#define R_HANDOFF 3
#define R_GRANT   4
#define R_CONFIRM 5     /* KEEPER: a drain that only confirms (a read) */

/* what an append carries (rkey): a plain turn, command K's turn, and
 * (EFFECTS) K's effect's intent and resolution entries, each keyed */
#define KEY_NONE   0
#define KEY_K      1    /* K's turn: the command key; under EFFECTS, E's commit */
#define KEY_INTENT 2    /* host.effect, key fx:<id>:<attempt ra>:<epoch re> */
#define KEY_RES    3    /* host.effect_resolved, key fr:<id>:<attempt ra>, happened rh */
#define KEY_BAND   4    /* BAND: a host.band note, the band's transition before a handoff */

/* EFFECTS: a holder's progress through command K's effect E (hfx) */
#define FX_NONE   0     /* not working on K's effect */
#define FX_INTENT 1     /* the intent is sent, its answer awaited */
#define FX_READY  2     /* the intent was answered OK: may invoke E */
#define FX_DONE   3     /* E invoked (or its call failed): K's turn comes next */
#define FX_RES    4     /* a resolution is sent, its answer awaited */

/* request states */
#define Q_FREE 0
#define Q_INFL 1   /* sent, not applied */
#define Q_OK   2   /* applied and accepted: the answer is in flight */
#define Q_NO   3   /* refused for epoch, holder or expiry */
#define Q_SEEN 4   /* refused: seen_behind (not a fencing event) */

/* ---------------------------------------------------------------- state */
/* The store: the worlds head row (driver/sqlite change.go condUpdate). */
byte w_pos = 1;         /* position of the last entry (1: lease.granted{home, 1}) */
byte w_epoch = 1;
byte w_holder = NAME(HOME);
byte w_rem = T_LEASE;   /* expires_at − now, at least 0 */
byte w_gpos = 1;        /* granted_position: the entry that started w_epoch */

/* Ghosts, read only by the properties. */
byte gat_of[MAXPOS + 1];   /* W2: granted_at of each epoch, 0 = never started */
byte adopter[MAXPOS + 1];  /* W3: the generation that adopted each epoch, 0 = none */
byte rev_e;                /* W4: the epoch an operator revoked, 0 = none */
byte nrev;                 /* operator revokes so far */
bool wdead;                /* W5: the current epoch's lease has been seen expired */
byte kpos;                 /* W6: the position of command K's entry, 0 = not journaled */
#ifdef BAND
byte bnote;                /* W11: the epoch of the last host.band note journaled, 0 = none */
#endif
#ifdef EFFECTS
/* The journal's effect entries for K's effect E (what a replayed mirror
 * folds: host/effects.go fxState), and the witness outside the ledger. */
byte fxa;                  /* intents journaled (the last attempt's number), 0 = none */
byte fxres;                /* the last attempt's resolution: 0 none (pending if fxa > 0), 1 happened, 2 not */
byte wit;                  /* W9 ghost: the downstream's count of E's invocations */
#endif

/* The holders: one generation's memory each (lost at a crash). */
byte inc[NH];       /* crashes so far */
byte gstart[NH];    /* the epoch when this generation first looked (sim/world.go startEpoch) */
byte hep[NH];       /* the epoch this generation holds, 0 = none */
byte hgat[NH];      /* its granted_at */
bool hren[NH];      /* a synchronous renewal was confirmed since adoption */
byte age[NH];       /* now − send of the last confirmed expiry-setting write */
byte hoff[NH];      /* the last epoch this generation handed off (never re-adopted) */
bool prep[NH];      /* an append passed its runway check, not yet sent (a pause may sit here) */
#ifdef BAND
byte hnote[NH];     /* the epoch under which this generation's band note was answered OK */
#endif
#ifdef EFFECTS
byte hfx[NH];       /* FX_*: this generation's progress through K's effect */
#endif

/* Requests: slot 2i is holder i's outstanding call, slot 2i+1 an orphan of
 * holder i (timed out, or its sender crashed) that may still land. */
byte rk[2 * NH];    /* kind */
byte re[2 * NH];    /* the epoch it names; for an accepted grant, the new epoch */
byte rs[2 * NH];    /* seen_position (append); for an accepted grant, its position */
byte rg[2 * NH];    /* ghost: the sending generation (appends only) */
byte rst[2 * NH];   /* Q_* */
byte rkey[2 * NH];  /* KEY_*: the append's keyed entry, if any */
#ifdef EFFECTS
byte ra[2 * NH];    /* the attempt an intent or resolution names */
bool rh[2 * NH];    /* a resolution's answer: E happened */
bool rkh[2 * NH];   /* an intent's key (attempt ra AND epoch re) is journaled already */
#endif
bool rmok[2 * NH];  /* ghost (W8): the turn was decided on a mirror replayed through its epoch's grant */
byte sage[NH];      /* now − send of holder i's outstanding call */

#define GEN(i) ((i) * (MAXINC + 1) + inc[i] + 1)

#ifdef COVER
#define STEP atomic
#else
#define STEP d_step
#endif

#define CHECK(name, c) if :: !(c) -> printf(#name); printf("\n"); assert(c) :: else -> skip fi

/* W4: the most generous reading of holder i's clock is store now − S, so its
 * largest runway is T_LEASE − S − (now − S − send) = T_LEASE − age. */
#define BELIEVES(i) (hep[i] != 0 && hren[i] && age[i] < T_LEASE && hep[i] != rev_e)
#define W4(i) CHECK(VIOLATED_W4_belief_implies_lease, !BELIEVES(i) || (w_epoch == hep[i] && w_holder == NAME(i) && w_rem > 0))

inline inv() {
	W4(0);
	W4(1);
	CHECK(VIOLATED_W5_expiry_is_absorbing, !(wdead && w_holder != NOBODY && w_rem > 0));
	wdead = (w_holder != NOBODY && (wdead || w_rem == 0))
}

/* W3: a new epoch starts: exactly current + 1, never started before */
inline start_epoch(h) {
	CHECK(VIOLATED_W3_one_holder_per_epoch, gat_of[w_epoch + 1] == 0);
	w_epoch++; w_holder = h; w_rem = T_LEASE; w_gpos = w_pos; gat_of[w_epoch] = w_pos;
	wdead = 0
}

/* W3: at most one generation adopts an epoch */
inline adopt(i, e, g) {
	CHECK(VIOLATED_W3_one_holder_per_epoch, adopter[e] == 0 || adopter[e] == GEN(i));
	adopter[e] = GEN(i);
	hep[i] = e; hgat[i] = g; hren[i] = 0; age[i] = 0;
	printf("H%d (generation id %d) adopts epoch %d (granted at %d)\n", i, GEN(i), e, g)
}

/* ------------------------------------------------------------ the clock */
active proctype Clock() {
end:
	do
	:: STEP {
		if :: w_rem > 0 -> w_rem-- :: else -> skip fi;
		/* ages are kept only where a guard reads them (a confirmed
		 * renewal; a renewal in flight), else 0: fewer states */
		if :: hren[0] && age[0] < AGEMAX -> age[0]++ :: else -> skip fi;
		if :: hren[1] && age[1] < AGEMAX -> age[1]++ :: else -> skip fi;
		if :: rk[0] == R_RENEW && sage[0] < AGEMAX -> sage[0]++ :: else -> skip fi;
		if :: rk[2] == R_RENEW && sage[1] < AGEMAX -> sage[1]++ :: else -> skip fi;
#ifdef BUG_CONFIRM_MOVES_RUNWAY
		/* only the bug reads a confirmation's send time */
		if :: rk[0] == R_CONFIRM && sage[0] < AGEMAX -> sage[0]++ :: else -> skip fi;
		if :: rk[2] == R_CONFIRM && sage[1] < AGEMAX -> sage[1]++ :: else -> skip fi;
#endif
		printf("  clock +1: lease rem %d; H0 age %d; H1 age %d\n", w_rem, age[0], age[1]);
		inv()
	}
	od
}

/* ---------------------------------------------- the sweep: world/sweeper.go */
/* Sweeper.SweepOnce → LeaseSweepExpired (driver/sqlite/sweep.go,
 * driver/postgres/sweep.go) → journal.PlanSweep: if held and expired at store
 * time now, lease.revoked{expiry} then lease.granted{home, epoch + 1} in ONE
 * transaction; condUpdate WHERE position, epoch, holder = $h,
 * expires_at <= $now. Here: at any moment. */
active proctype Sweeper() {
end:
	do
	:: STEP {
		w_holder != NOBODY && w_rem == 0 && w_pos + 2 <= MAXPOS ->
		w_pos = w_pos + 2;
		start_epoch(NAME(HOME));
		printf("sweep: epoch %d expired: revoked at %d, granted home (H%d) epoch %d at %d\n",
			w_epoch - 1, w_pos - 1, HOME, w_epoch, w_pos);
		inv()
	}
	od
}

/* ------------------------------------- an operator: journal.PlanRevoke */
/* lease.revoked{e, reason}: WHERE position, epoch, holder = $h (no expiry
 * term). It ends the epoch: nobody holds until a grant. Bounded (MAXREV). */
#if MAXREV > 0   /* no revoke: no grant either (nobody holds only after a revoke) */
active proctype Operator() {
end:
	do
	:: STEP {
		nrev < MAXREV && w_holder != NOBODY && w_pos + 1 <= MAXPOS ->
		nrev++; w_pos++; w_holder = NOBODY; w_rem = 0; rev_e = w_epoch;
		printf("operator revokes epoch %d at %d\n", w_epoch, w_pos);
		inv()
	}
	od
}
#endif

/* ------------------------------------------------- the store applies a request */
#ifdef EFFECTS
#define CLEAR_FX(k) ra[k] = 0; rh[k] = 0; rkh[k] = 0
#define COPY_FX(a, b) ra[a] = ra[b]; rh[a] = rh[b]; rkh[a] = rkh[b]
#else
#define CLEAR_FX(k) skip
#define COPY_FX(a, b) skip
#endif

inline clear_slot(k) {
	rk[k] = R_NONE; re[k] = 0; rs[k] = 0; rg[k] = 0; rst[k] = Q_FREE; rkey[k] = 0; rmok[k] = 0;
	CLEAR_FX(k)
}

#ifdef BUG_NO_KEY_DEDUP
#define KDUP(k) false
#else
#define KDUP(k) (rkey[k] == KEY_K && kpos != 0)
#endif
#ifdef EFFECTS
/* the key rule for E's entries. An intent's key is fx:<id>:<attempt>:<epoch>
 * (host/effects.go intentKey): it is held iff an intent of the same attempt
 * AND the same epoch is journaled — rkh, set on every request in flight
 * with that key when one lands (a request sent later never carries a
 * journaled key: a decision on the replayed head names attempt fxa + 1).
 * An intent of a journaled attempt under another epoch is a new key and
 * goes to the lease rule, which refuses it: that attempt was journaled
 * after the request's decision, so under a later epoch than the request's.
 * The bug: the old key fx:<id>:<attempt> — intents are journaled in attempt
 * order, so attempt a's is held iff a <= fxa, whatever its epoch. A
 * resolution's key fr:<id>:<attempt> is held iff a later attempt exists or
 * the last one is resolved. */
#ifdef BUG_INTENT_KEY_WITHOUT_EPOCH
#define IDUP(k) (ra[k] <= fxa)
#else
#define IDUP(k) rkh[k]
#endif
#define DEDUP(k) (KDUP(k) || \
	rkey[k] == KEY_INTENT && IDUP(k) || \
	rkey[k] == KEY_RES && (ra[k] < fxa || fxres != 0))
/* an intent journaled from slot k: the requests in flight with its key
 * (the same attempt, the same epoch: a retry of the same decision under
 * the same epoch, sent while the first was an orphan) now hit the key rule */
#ifdef BUG_INTENT_KEY_WITHOUT_EPOCH
#define HOLD_KEY(k, j) skip
#else
#define HOLD_KEY(k, j) if :: j != k && rkey[j] == KEY_INTENT && rst[j] == Q_INFL && ra[j] == ra[k] && re[j] == re[k] -> rkh[j] = 1 :: else -> skip fi
#endif
#else
#define DEDUP(k) KDUP(k)
#endif

/* Net(k): slot k's request lands at the store, at any time after its send,
 * and is planned and written in one step. */
proctype Net(byte k) {
	byte me = k / 2;
	byte res;
end:
	do
	:: STEP {
		rst[k] == Q_INFL ->
		res = Q_NO;
		if
		:: rk[k] == R_RENEW ->
			/* journal.PlanRenew: writeRefusal(holder, epoch, now) — epoch
			 * current, held by holder, not expired; condUpdate WHERE position,
			 * epoch, holder = $h, expires_at > $now. Never revives. */
			if
#ifdef BUG_RENEW_REVIVES
			:: re[k] == w_epoch && w_holder == NAME(me) && w_pos + 1 <= MAXPOS ->
#else
			:: re[k] == w_epoch && w_holder == NAME(me) && w_rem > 0 && w_pos + 1 <= MAXPOS ->
#endif
				w_pos++; w_rem = T_LEASE; res = Q_OK
			:: else -> skip
			fi
#ifdef KEEPER
		:: rk[k] == R_CONFIRM ->
			/* KEEPER: a drain that only confirms: driver WorldRenewMany with
			 * Extend false → journal.CheckRenew: epoch current, held by the
			 * sender, not expired on the store's clock; writes nothing */
			if
			:: re[k] == w_epoch && w_holder == NAME(me) && w_rem > 0 -> res = Q_OK
			:: else -> skip
			fi
#endif
		:: rk[k] == R_APPEND ->
			/* journal.PlanAppendKeyed (journal/plan.go): the key rule first —
			 * a key the world's journal holds already is answered with its
			 * first position and nothing is written, in any epoch, by any
			 * holder (driver/sqlite/journal.go looks it up in the same
			 * transaction). Then journal.CheckAppend (journal/append.go) and
			 * the condUpdate WHERE position, epoch, holder = $h,
			 * expires_at > $now, granted_position <= $seen; on Postgres
			 * leasehold_journal_append (0002_append_function.sql) */
			if
			:: DEDUP(k) ->
				printf("store: H%d's append carries key kind %d (K at %d), journaled already: answered with its position, nothing written\n", me, rkey[k], kpos);
				res = Q_OK
#ifdef BUG_WORLD_NO_EPOCH_CHECK
			:: !DEDUP(k) && w_holder != NOBODY && w_holder == NAME(me) && w_rem > 0 && rs[k] >= w_gpos && w_pos + 1 <= MAXPOS ->
#else
			:: !DEDUP(k) && re[k] == w_epoch && w_holder != NOBODY && w_holder == NAME(me) && w_rem > 0 && rs[k] >= w_gpos && w_pos + 1 <= MAXPOS ->
#endif
				w_pos++;
				CHECK(VIOLATED_W6_command_applied_once, rkey[k] != KEY_K || kpos == 0);
				CHECK(VIOLATED_W8_decided_on_a_mirror_through_its_grant, rmok[k]);
				if :: rkey[k] == KEY_K -> kpos = w_pos :: else -> skip fi;
#ifdef BAND
				if :: rkey[k] == KEY_BAND -> bnote = re[k] :: else -> skip fi;
#endif
#ifdef EFFECTS
				if
				:: rkey[k] == KEY_INTENT ->
					fxa = ra[k]; fxres = 0;
					HOLD_KEY(k, 0); HOLD_KEY(k, 1); HOLD_KEY(k, 2); HOLD_KEY(k, 3);
					printf("store: E's intent, attempt %d, journaled at %d\n", fxa, w_pos)
				:: rkey[k] == KEY_RES ->
					fxres = (rh[k] -> 1 : 2);
					printf("store: E's attempt %d resolved at %d: happened %d\n", fxa, w_pos, rh[k])
				:: else -> skip
				fi;
#endif
				CHECK(VIOLATED_W1_append_fenced_at_commit, re[k] == w_epoch && w_holder == NAME(me));
				CHECK(VIOLATED_W2_append_after_its_grant, gat_of[re[k]] != 0 && w_pos > gat_of[re[k]] && rs[k] >= gat_of[re[k]]);
				CHECK(VIOLATED_W3_one_holder_per_epoch, adopter[re[k]] == rg[k]);
				printf("store: H%d's append (epoch %d, seen %d, generation %d) accepted at %d\n", me, re[k], rs[k], rg[k], w_pos);
				res = Q_OK
#ifndef EFFECTS   /* every effects-variant append is decided on a replayed mirror: never behind */
			:: !DEDUP(k) && re[k] == w_epoch && w_holder == NAME(me) && w_rem > 0 && rs[k] < w_gpos ->
				printf("store: H%d's append refused: seen %d is behind the grant at %d\n", me, rs[k], w_gpos);
				res = Q_SEEN
#endif
			:: else -> skip
			fi
		:: rk[k] == R_HANDOFF ->
			/* journal.PlanHandoff: the live current holder hands epoch + 1 to
			 * the other; condUpdate WHERE position, epoch, holder = $from,
			 * expires_at > $now */
			if
			:: re[k] == w_epoch && w_holder == NAME(me) && w_rem > 0 && w_pos + 1 <= MAXPOS ->
#ifdef BAND
				CHECK(VIOLATED_W11_band_move_journaled_first, bnote == re[k]);
#endif
				w_pos++;
				start_epoch(NAME(1 - me));
				printf("store: H%d hands epoch %d to H%d at %d\n", me, w_epoch, 1 - me, w_pos);
				res = Q_OK
			:: else -> skip
			fi
#if MAXREV > 0
		:: rk[k] == R_GRANT ->
			/* journal.PlanGrant: epoch as named, nobody holds; condUpdate
			 * WHERE position, epoch, holder = '' */
			if
			:: re[k] == w_epoch && w_holder == NOBODY && w_pos + 1 <= MAXPOS ->
				w_pos++;
				start_epoch(NAME(me));
				re[k] = w_epoch; rs[k] = w_gpos;
				printf("store: grants H%d epoch %d at %d\n", me, w_epoch, w_pos);
				res = Q_OK
			:: else -> skip
			fi
#endif
		fi;
		printf("store: H%d's request kind %d (epoch %d) applied: %d (head: epoch %d holder %d rem %d pos %d)\n",
			me, rk[k], re[k], res, w_epoch, w_holder, w_rem, w_pos);
		if
		:: k % 2 == 0 -> rst[k] = res    /* the answer is in flight to the caller */
		:: else -> clear_slot(k)         /* an orphan: nobody waits for it */
		fi;
		res = 0;
		inv()
	}
	:: STEP {
		/* an orphaned request is lost: a write never made */
		k % 2 == 1 && rst[k] == Q_INFL -> clear_slot(k)
	}
	od
}

/* ------------------------------------------------------------- a holder */
/* sim/world.go worldLoop; world/appender.go */
inline send(i, kind, e, seen) {
	rk[2 * i] = kind; re[2 * i] = e; rs[2 * i] = seen; rst[2 * i] = Q_INFL;
	rg[2 * i] = (kind == R_APPEND -> GEN(i) : 0);
	sage[i] = 0
}

#ifdef EFFECTS
#define DROP_FX(i) hfx[i] = FX_NONE
#else
#define DROP_FX(i) skip
#endif

inline drop(i) {
	hep[i] = 0; hgat[i] = 0; hren[i] = 0; age[i] = 0; prep[i] = 0;
	DROP_FX(i)
}

/* the outstanding call leaves the caller (timeout or crash): the request,
 * if not applied yet, stays in the network as an orphan (if the orphan slot
 * is taken, it is lost); an answer in flight is discarded */
inline orphan(i) {
	if
	:: rst[2 * i] == Q_INFL && rst[2 * i + 1] == Q_FREE && rk[2 * i] != R_CONFIRM ->
		/* (a confirmation writes nothing: landing late or never is the same) */
		rk[2 * i + 1] = rk[2 * i]; re[2 * i + 1] = re[2 * i]; rs[2 * i + 1] = rs[2 * i];
		rg[2 * i + 1] = rg[2 * i]; rst[2 * i + 1] = Q_INFL;
		rkey[2 * i + 1] = rkey[2 * i]; rmok[2 * i + 1] = rmok[2 * i];
		COPY_FX(2 * i + 1, 2 * i)
	:: else -> skip
	fi;
#ifdef EFFECTS
	/* an intent or a resolution whose answer never came: journalOwn fails,
	 * K is answered (unknown outcome) and dropped from the turn; its client
	 * may retry, and the request may still land */
	if :: hfx[i] == FX_INTENT || hfx[i] == FX_RES -> hfx[i] = FX_NONE :: else -> skip fi;
#endif
	clear_slot(2 * i); sage[i] = 0
}

/* seen_position: a mirror replayed to the head sends the head; the store
 * compares seen only with granted positions, so the newest grant at or
 * before the head (w_gpos) stands for it — the same answers, fewer states.
 * A mirror replayed part way (through its grant, not to the head) answers
 * as the head does: the store compares seen only while the turn's epoch is
 * current, i.e. only with that epoch's own grant (the head is the most
 * permissive value, which is what BUG_WORLD_NO_EPOCH_CHECK exploits). A
 * mirror behind the grant sends a position before it. The bug: the host
 * sends its grant, replayed or not. */
#ifdef BUG_APPEND_BEFORE_REPLAY
#define SEEN(i, replayed) hgat[i]
#else
#define SEEN(i, replayed) (replayed -> w_gpos : hgat[i] - 1)
#endif

inline send_append(i, key, replayed) {
	prep[i] = 0;
	send(i, R_APPEND, hep[i], 0);
	rs[2 * i] = SEEN(i, replayed); rkey[2 * i] = key; rmok[2 * i] = replayed
}

#ifdef BUG_ADOPT_OLD_EPOCH
#define NEWER(i) (w_epoch >= gstart[i])
#else
#define NEWER(i) (w_epoch > gstart[i])
#endif
#ifdef SIM_READOPT
#define NOT_HANDED(i) true
#else
#define NOT_HANDED(i) (w_epoch > hoff[i])
#endif

#ifdef EFFECTS
/* the only appends are K's effect's entries and its turn */
#define FX_APPENDS(i) (hfx[i] == FX_DONE || hfx[i] == FX_NONE && kpos == 0)
#else
#define FX_APPENDS(i) true
#endif

/* BAND: a band move hands off only once its note was journaled under the
 * epoch it hands off (the bug: without one) */
#if defined(BAND) && !defined(BUG_BAND_NO_NOTE)
#define NOTED(i) (hnote[i] == hep[i])
#else
#define NOTED(i) true
#endif

proctype Holder(byte i) {
end:
	do
	/* ------------------------------------------------------- faults */
	:: STEP {
		/* crash: the process restarts under the SAME name, its memory lost;
		 * its outstanding request may still land (an orphan). The new
		 * generation's first look at the head sets startEpoch (earliest:
		 * now, the most permissive for adoption). */
		inc[i] < MAXINC ->
		orphan(i);
		inc[i]++;
		drop(i); hoff[i] = 0;
#ifdef BAND
		hnote[i] = 0;
#endif
		gstart[i] = w_epoch;
		printf("H%d crashes and restarts as generation id %d (same name; start epoch %d)\n", i, GEN(i), gstart[i]);
		inv()
	}
	:: STEP {
		/* the call times out: the caller moves on; the request may still land */
		rst[2 * i] != Q_FREE -> orphan(i);
		printf("H%d: call timed out\n", i)
	}

	/* ----------------------------------- adoption: sim/world.go worldLoop */
	:: STEP {
		/* WorldGet: adopt only an epoch given to this name after this
		 * generation started (a handoff or sweep grant to it, or its own
		 * grant landing late), never one it handed off */
		hep[i] == 0 && rst[2 * i] == Q_FREE && w_holder == NAME(i) && NEWER(i) && NOT_HANDED(i) ->
		adopt(i, w_epoch, w_gpos);
		inv()
	}
#if MAXREV > 0
	:: STEP {
		/* journal.PlanGrant, asked while nobody holds, naming the epoch read */
		hep[i] == 0 && rst[2 * i] == Q_FREE && w_holder == NOBODY ->
		send(i, R_GRANT, w_epoch, 0);
		printf("H%d asks for a grant (epoch %d current)\n", i, w_epoch)
	}
#endif

	/* ------------------------------------------ renew: journal.PlanRenew */
	:: STEP {
		/* synchronous before the first append after adoption; any time after */
		hep[i] != 0 && rst[2 * i] == Q_FREE && !prep[i] ->
		send(i, R_RENEW, hep[i], 0);
		printf("H%d renews epoch %d (runway counts from this send)\n", i, hep[i])
	}

#ifdef KEEPER
	/* ------------------------- the world keeper: host/keeper.go drain */
	:: STEP {
		/* a drain that only confirms (Extend false): a read, no position */
		hep[i] != 0 && rst[2 * i] == Q_FREE && !prep[i] ->
		send(i, R_CONFIRM, hep[i], 0);
		printf("H%d's keeper confirms epoch %d\n", i, hep[i])
	}
#endif

	/* --------------------------------------- append: world/appender.go */
	:: STEP {
		/* lease.Runway(sent, now, tm) > 0 under the most generous reading */
		hep[i] != 0 && hren[i] && age[i] < T_LEASE && !prep[i] && rst[2 * i] == Q_FREE && FX_APPENDS(i) ->
		prep[i] = 1;
		printf("H%d: runway check passes (age %d): appends next\n", i, age[i])
	}
	/* the send, after any pause: a turn decided on the holder's mirror, which
	 * either has replayed the journal to the head (host/mirror.go catchUp;
	 * host.go acquire: catch up, renew, catch up again if the grant landed
	 * after the read) or has not yet replayed through the epoch's grant;
	 * seen_position is what it replayed (hosted.go turn → world.Holder
	 * Append(m.pos)). The turn is a plain one or command K's (submitted, or
	 * retried, to this holder by K's client, any number of times). */
#ifndef EFFECTS
	:: STEP {
		prep[i] && hep[i] != 0 && rst[2 * i] == Q_FREE -> send_append(i, KEY_NONE, 1);
		printf("H%d sends a turn under epoch %d (granted at %d), decided on its mirror replayed to the head: seen %d\n", i, hep[i], hgat[i], rs[2 * i])
	}
	:: STEP {
		prep[i] && hep[i] != 0 && rst[2 * i] == Q_FREE -> send_append(i, KEY_NONE, 0);
		printf("H%d sends a turn under epoch %d (granted at %d), decided on its mirror NOT yet replayed through that grant: seen %d\n", i, hep[i], hgat[i], rs[2 * i])
	}
	:: STEP {
		prep[i] && hep[i] != 0 && rst[2 * i] == Q_FREE -> send_append(i, KEY_K, 1);
		printf("H%d sends command K's turn under epoch %d (granted at %d), decided on its mirror replayed to the head: seen %d\n", i, hep[i], hgat[i], rs[2 * i])
	}
#ifdef BAND
	:: STEP {
		/* the band decides a move: its note first (hosted.judgeBand → handoff) */
		prep[i] && hep[i] != 0 && hnote[i] != hep[i] && rst[2 * i] == Q_FREE -> send_append(i, KEY_BAND, 1);
		printf("H%d journals a band transition under epoch %d\n", i, hep[i])
	}
#endif
#else
	/* ------------------- K's effect E: host/turn_effects.go, effects.go */
	/* K is decided on the holder's mirror replayed to the head (it folds E's
	 * intents and resolutions: fxa, fxres; and K's turn: kpos), after the
	 * runway check (prep: the gate). The decision, by what the mirror holds: */
	:: STEP {
		/* no intent, or the last attempt resolved "did not happen": a new
		 * attempt — runEffects: the intent (key fx:<id>:<attempt>:<epoch>) */
#ifdef BUG_REINVOKE_UNCERTAIN
		/* the bug: a pending intent is ignored (settleUncertain skipped) */
		prep[i] && hfx[i] == FX_NONE && kpos == 0 && fxres != 1 && rst[2 * i] == Q_FREE ->
#else
		prep[i] && hfx[i] == FX_NONE && kpos == 0 && (fxa == 0 || fxres == 2) && rst[2 * i] == Q_FREE ->
#endif
		send_append(i, KEY_INTENT, 1);
		ra[2 * i] = fxa + 1; hfx[i] = FX_INTENT;
		printf("H%d decides K: sends E's intent, attempt %d, under epoch %d (seen %d)\n", i, ra[2 * i], hep[i], rs[2 * i])
	}
	:: STEP {
		/* the last intent is pending (no turn, no resolution): uncertain.
		 * settleUncertain: Reconcile (reads the witness), journal the answer */
		prep[i] && hfx[i] == FX_NONE && kpos == 0 && fxa != 0 && fxres == 0 && rst[2 * i] == Q_FREE ->
		send_append(i, KEY_RES, 1);
		ra[2 * i] = fxa; rh[2 * i] = (wit != 0); hfx[i] = FX_RES;
		printf("H%d decides K: E's attempt %d is uncertain; reconciled (happened %d), sends the resolution under epoch %d\n", i, fxa, rh[2 * i], hep[i])
	}
	:: STEP {
		/* resolved "happened": K's turn with the recorded outcome, no call */
		prep[i] && hfx[i] == FX_NONE && kpos == 0 && fxres == 1 && rst[2 * i] == Q_FREE ->
		send_append(i, KEY_K, 1);
		printf("H%d decides K: E happened (resolved); sends K's turn under epoch %d without invoking\n", i, hep[i])
	}
	:: STEP {
		/* Effector.Invoke: only while the call's deadline is ahead — the
		 * runway from the last confirmed renewal, most generous reading */
#ifdef BUG_EFFECT_NO_GATE
		hfx[i] == FX_READY && hep[i] != 0 ->
#else
		hfx[i] == FX_READY && hep[i] != 0 && hren[i] && age[i] < T_LEASE ->
#endif
		CHECK(VIOLATED_W10_effect_only_under_a_live_lease, hep[i] == rev_e || w_epoch == hep[i] && w_holder == NAME(i) && w_rem > 0);
		CHECK(VIOLATED_W9_effect_invoked_at_most_once, wit == 0);
		wit = 1; hfx[i] = FX_DONE;
		printf("H%d invokes E under epoch %d (age %d; store: epoch %d holder %d rem %d)\n", i, hep[i], age[i], w_epoch, w_holder, w_rem);
		inv()
	}
	:: STEP {
		/* the call fails (its deadline passed, the effector erred): the
		 * turn records the error */
		hfx[i] == FX_READY -> hfx[i] = FX_DONE;
		printf("H%d: E's call fails without effect\n", i)
	}
	:: STEP {
		/* K was journaled meanwhile (by a later holder): its client is
		 * answered from the mirror, nothing is sent */
		prep[i] && hfx[i] == FX_NONE && kpos != 0 -> prep[i] = 0
	}
	:: STEP {
		/* the commit: K's turn, recording E's outcome */
		prep[i] && hfx[i] == FX_DONE && rst[2 * i] == Q_FREE ->
		send_append(i, KEY_K, 1); hfx[i] = FX_NONE;
		printf("H%d sends K's turn (E's commit) under epoch %d\n", i, hep[i])
	}
#endif

	/* ------------------------------------- handoff: journal.PlanHandoff */
	:: STEP {
		/* to the other holder (home → spill, or the handback); the holder
		 * stops acting under the epoch at the send */
		hep[i] != 0 && hren[i] && rst[2 * i] == Q_FREE && !prep[i] && NOTED(i) ->
		send(i, R_HANDOFF, hep[i], 0);
		hoff[i] = hep[i];
		printf("H%d hands epoch %d off to H%d\n", i, hep[i], 1 - i);
		drop(i)
	}

	/* --------------------------------------------------------- answers */
	:: STEP {
		rst[2 * i] == Q_OK || rst[2 * i] == Q_NO || rst[2 * i] == Q_SEEN ->
		if
		:: rk[2 * i] == R_RENEW && hep[i] == re[2 * i] && rst[2 * i] == Q_OK ->
			/* worldHolder.change: h.sent = the send */
			if :: !hren[i] || sage[i] < age[i] -> age[i] = sage[i] :: else -> skip fi;
			hren[i] = 1;
			printf("H%d: renewal confirmed, runway age %d\n", i, age[i])
		:: rk[2 * i] == R_RENEW && hep[i] == re[2 * i] && rst[2 * i] != Q_OK ->
			drop(i); printf("H%d: renewal refused: drops its epoch\n", i)
#ifdef BAND
		:: rk[2 * i] == R_APPEND && rst[2 * i] == Q_OK && rkey[2 * i] == KEY_BAND && hep[i] == re[2 * i] ->
			hnote[i] = hep[i];
			printf("H%d: its band note under epoch %d is journaled: it may hand off\n", i, hep[i])
#endif
		:: rk[2 * i] == R_APPEND && rst[2 * i] == Q_OK && rkey[2 * i] == KEY_K ->
			/* K acknowledged to its client: it must be in the journal */
			CHECK(VIOLATED_W7_acknowledged_command_journaled, kpos != 0 && kpos <= w_pos);
			printf("H%d acknowledges K (journaled at %d)\n", i, kpos)
		:: rk[2 * i] == R_APPEND && hep[i] == re[2 * i] && rst[2 * i] == Q_NO ->
			drop(i); printf("H%d: append fenced: drops its epoch\n", i)
#ifdef EFFECTS
		:: rk[2 * i] == R_APPEND && rst[2 * i] == Q_OK && rkey[2 * i] == KEY_INTENT && hfx[i] == FX_INTENT ->
			hfx[i] = FX_READY;
			printf("H%d: E's intent (attempt %d) answered OK\n", i, ra[2 * i])
		:: rk[2 * i] == R_APPEND && rst[2 * i] == Q_OK && rkey[2 * i] == KEY_RES && hfx[i] == FX_RES ->
			hfx[i] = FX_NONE;
			printf("H%d: E's resolution journaled: decides K again on its mirror\n", i)
#endif
#ifdef KEEPER
		:: rk[2 * i] == R_CONFIRM && hep[i] == re[2 * i] && rst[2 * i] == Q_OK ->
			/* applyDrains: confirmedAt (the self-stop's lag) moves; the
			 * runway's origin (extendedAt) does not */
#ifdef BUG_CONFIRM_MOVES_RUNWAY
			if :: hren[i] && sage[i] < age[i] -> age[i] = sage[i] :: else -> skip fi;
#endif
			printf("H%d: lease confirmed (runway age %d)\n", i, age[i])
		:: rk[2 * i] == R_CONFIRM && hep[i] == re[2 * i] && rst[2 * i] != Q_OK ->
			drop(i); printf("H%d: confirmation refused: lets the world go\n", i)
#endif
#if MAXREV > 0
		:: rk[2 * i] == R_GRANT && rst[2 * i] == Q_OK && hep[i] == 0 ->
			adopt(i, re[2 * i], rs[2 * i])
#endif
		:: else -> skip
		fi;
		clear_slot(2 * i); sage[i] = 0;
		inv()
	}
	od
}

init {
	gat_of[1] = 1;
	atomic {
		run Net(0); run Net(1); run Net(2); run Net(3);
		run Holder(0); run Holder(1)
	}
}
