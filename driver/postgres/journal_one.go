package postgres

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// appendOneSQL (appendOneKeyedSQL with a key) appends a batch of one request, signed or not, in one
// statement without the PL/pgSQL function on its accepted path: a
// conditional UPDATE of the head whose WHERE is the append rule and whose
// SET chains journal.Canonical's hash from the old row, and the entry's
// INSERT in a CTE fed by the UPDATE's RETURNING. When the UPDATE matches
// nothing (a refusal, a key already appended, a head moved while the
// statement waited, a missing world) the statement answers with
// leasehold_journal_append instead (the UNION ALL's gated branch), so every
// answer is still one round trip and the function's. Parameters are
// leasehold_journal_append's, one request's scalars in place of its
// arrays: $1 world, $2 now (NULL: the store clock), $3 holder, $4 epoch,
// $5 seen position, $6 kind, $7 key, $8 payload, $9 position, $10
// signature (” unsigned), $11 the key the signature was verified against
// (NULL: none known), $12 the verdict.
//
// The expiry, under the lock. The WHERE's expiry test reads the clock
// before the UPDATE waits for the head's row lock, and Postgres
// re-evaluates it (EvalPlanQual) only if the lock's holder changed the
// row; a transaction that only locked it (SELECT … FOR UPDATE) leaves it
// judged on the time before the wait. So the UPDATE's RETURNING, which is
// evaluated once the row is updated — the lock held — reads
// clock_timestamp() again, and the INSERT calls
// leasehold_append_expired_under_lock (migration 0021) when that time is
// not before the expiry: it raises LH002, the whole statement rolls back,
// and the driver asks the function, which refuses the append 'expired'
// with the clock it reads under the lock (SPEC §5). The WHERE's test is
// kept as the common refusal's way to the function in the same round trip.
//
// The store time. The entry's store time is the clock read when the
// UPDATE evaluated its row (once: the MATERIALIZED CTE c), raised to the
// head's last time as the function does, so it is never after the time the
// expiry is judged on and never before the previous entry's.
//
// Notification. The UPDATE's RETURNING also notifies the world on the
// journal's channel (notify.go; the name the trigger of migration 0020
// computes) and sets leasehold.journal_notified for the transaction, so
// the journal's trigger steps aside (migration 0026): it runs only when
// the UPDATE matched, so only when this statement writes entries; when
// the function answers instead, the trigger notifies for it.
//
// Concurrency. The UPDATE joins the head as the statement's snapshot saw
// it (s) and requires the same position and last hash on the row it
// updates (w): when another transaction appended while this one waited
// for the lock, EvalPlanQual re-evaluates the WHERE on the newest head, it
// fails, and the function decides with fresh snapshots — so the key probe,
// which reads the statement's snapshot, is never judged on a stale journal.
// (A ctid join would not do: Postgres 15's TID scan does not recheck its
// condition under EvalPlanQual.) The previous hash is the snapshot's,
// equal to the updated row's old one under that condition: Postgres 15 has
// no OLD in RETURNING.
var (
	appendOneSQL      = strings.Replace(appendOneTemplate, "/*key*/", "AND $7::text = ''", 1)
	appendOneKeyedSQL = strings.Replace(appendOneTemplate, "/*key*/", `AND $7::text <> ''
	   AND NOT EXISTS (SELECT 1 FROM journal_entries j WHERE j.world = $1 AND j.key = $7::text AND j.key <> '')`, 1)
)

// appendOneTemplate is appendOneSQL and appendOneKeyedSQL before the key's
// condition replaces /*key*/: a keyed append matches only if its key was
// not appended yet (read on the statement's snapshot, which the head's
// unchanged position makes current); a keyless one's plan has no such
// probe, so it neither opens the key index nor builds the subplan on each
// execution.
// notifyInline is the one-statement appends' own notify (migration 0026):
// their world on the journal channel of this schema, and the transaction
// marked so the journal trigger steps aside. It reads $1 (the world).
const notifyInline = `pg_notify(CASE WHEN octet_length('leasehold_journal_' || current_schema()) > 63
	              THEN 'leasehold_journal_' || left(encode(sha256(convert_to(current_schema(), 'UTF8')), 'hex'), 32)
	              ELSE 'leasehold_journal_' || current_schema() END, $1::text) AS notified,
	          set_config('leasehold.journal_notified', 'on', true) AS trigger_skipped`

const appendOneTemplate = `WITH c AS MATERIALIZED (SELECT coalesce($2::timestamptz, clock_timestamp()) AS t),
h AS (
	UPDATE worlds w
	   SET position = w.position + 1,
	       last_time = greatest(c.t, w.last_time),
	       last_hash = sha256('\x6c65617365686f6c642f6a6f75726e616c2f76310a'::bytea
	           || int4send(length(convert_to($1::text, 'UTF8'))) || convert_to($1::text, 'UTF8')
	           || int8send(w.position + 1)
	           || int8send($4::bigint)
	           || int4send(length(convert_to($6::text, 'UTF8'))) || convert_to($6::text, 'UTF8')
	           || int4send(length(convert_to($3::text, 'UTF8'))) || convert_to($3::text, 'UTF8')
	           || int4send(length(convert_to($7::text, 'UTF8'))) || convert_to($7::text, 'UTF8')
	           || int8send((extract(epoch FROM greatest(c.t, w.last_time)) * 1000000)::bigint)
	           || int4send(length(w.last_hash)) || w.last_hash
	           || int4send(length($8::bytea)) || $8::bytea)
	  FROM worlds s, c
	 WHERE w.id = $1 AND s.id = $1 AND w.position = s.position AND w.last_hash = s.last_hash
	   AND w.epoch = $4 AND w.holder <> '' AND w.holder = $3
	   AND w.expires_at > greatest(c.t, w.last_time)
	   AND $5::bigint >= w.granted_position AND $5::bigint <= w.position
	   AND CASE WHEN octet_length($10::bytea) > 0
	            THEN $9::bigint = w.position + 1 AND octet_length(w.holder_key) > 0
	                 AND w.holder_key = $11::bytea AND $12::boolean
	            ELSE octet_length(w.holder_key) = 0 END
	   /*key*/
	RETURNING w.position, w.last_hash, w.last_time, w.expires_at, s.last_hash AS prev_hash,
	          clock_timestamp() AS locked_time,
	          ` + notifyInline + `
),
e AS (
	INSERT INTO journal_entries (world, position, epoch, kind, holder, key, payload, store_time,
	    prev_hash, hash, signature)
	SELECT $1, h.position, $4, $6, $3, $7, $8, h.last_time, h.prev_hash, h.last_hash, $10
	  FROM h
	 WHERE CASE WHEN h.expires_at > greatest(coalesce($2::timestamptz, h.locked_time), h.last_time) THEN true
	            ELSE leasehold_append_expired_under_lock($1) END
	RETURNING position
)
SELECT e.position, NULL::text, $4::bigint, $3::text, NULL::bytea FROM e
UNION ALL
SELECT o_position, o_reason, o_epoch, o_holder, o_key
  FROM leasehold_journal_append($1, $2, ARRAY[$3::text], ARRAY[$4::bigint], ARRAY[$5::bigint], ARRAY[$6::text],
       ARRAY[$7::text], ARRAY[$8::bytea], ARRAY[$9::bigint], $10, $11, $12)
 WHERE NOT EXISTS (SELECT 1 FROM h)`

// errExpiredUnderLock is appendOneSQL's LH002: the lease expired while the
// append waited for the head's lock; nothing was written, and the
// function answers the append (refusing it 'expired').
var errExpiredUnderLock = errors.New("postgres: the lease expired while the append waited for the head's lock")

// isExpiredUnderLock reports leasehold_append_expired_under_lock's raise.
func isExpiredUnderLock(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == errExpiredUnderLockCode
}
