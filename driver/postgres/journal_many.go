package postgres

import (
	"strings"

	"github.com/leasehold/leasehold/driver"
)

// appendManySQL (appendManyKeyedSQL when a request has a key) appends a
// batch of two or more requests, signed or not, in one statement without
// the PL/pgSQL function on its accepted path — appendOneSQL's rules
// (journal_one.go), for every request of the batch. Its parameters are
// leasehold_journal_append's, arrays and all: $1 world, $2 now (NULL: the
// store clock), $3 holders, $4 epochs, $5 seen positions, $6 kinds, $7
// keys, $8 payloads, $9 positions, $10 signature (” unsigned), $11 the key
// the signature was verified against (NULL: none known), $12 the verdict.
// The driver sends it only when the batch's keys are distinct: the function
// answers a key repeated within a batch with its first position.
//
// The chain. The hashes of journal.Canonical are sequential, so the
// recursive CTE ch takes them one entry after the other from the head as
// the statement's snapshot saw it (s): entry i's hash over entry i-1's,
// each entry at position s.position+i, all at the store time the function
// gives a batch — the clock read once (c), raised to the head's last time.
//
// The rule. The head's conditional UPDATE matches only when every request
// would be accepted by the function: the head is still the snapshot's
// (position, last hash and last time, re-checked by EvalPlanQual on the
// newest row when the statement waited for the lock, so the chain and the
// key probe are never taken from a stale head), every request carries the
// head's epoch and holder, a live lease (the clock read before the wait),
// a seen position within [granted_position, position], and the signature
// rule of the batch (signed: the first position is the next, the head's
// key is the verified one and the verdict good; unsigned: the grant
// carries no key); keyed, no key of the batch is in the journal yet. The
// entries' INSERT reads the clock again once the head is updated — its
// row lock held — and raises LH002 through
// leasehold_append_expired_under_lock (migration 0021) when the lease has
// expired by then; the driver then asks the function. When the UPDATE
// matches nothing, the statement answers with the function (the UNION
// ALL's gated branch), which judges each request as before: a mixed
// batch, a refusal, a key already appended, a moved head.
//
// Notification: as appendOneSQL's, in the UPDATE's RETURNING (migration
// 0026).
var (
	appendManySQL      = strings.Replace(appendManyTemplate, "/*key*/", "", 1)
	appendManyKeyedSQL = strings.Replace(appendManyTemplate, "/*key*/",
		`AND NOT EXISTS (SELECT 1 FROM journal_entries j WHERE j.world = $1 AND j.key = ANY($7::text[]) AND j.key <> '')`, 1)
)

const appendManyTemplate = `WITH RECURSIVE c AS MATERIALIZED (SELECT coalesce($2::timestamptz, clock_timestamp()) AS t),
s AS MATERIALIZED (
	SELECT w.position, w.last_hash, w.last_time, greatest(c.t, w.last_time) AS now,
	       (extract(epoch FROM greatest(c.t, w.last_time)) * 1000000)::bigint AS us
	  FROM worlds w, c WHERE w.id = $1
),
ch (i, prev, hash) AS (
	SELECT 0, NULL::bytea, s.last_hash FROM s
	UNION ALL
	SELECT ch.i + 1, ch.hash, sha256('\x6c65617365686f6c642f6a6f75726e616c2f76310a'::bytea
	           || int4send(length(convert_to($1::text, 'UTF8'))) || convert_to($1::text, 'UTF8')
	           || int8send(s.position + ch.i + 1)
	           || int8send(($4::bigint[])[ch.i + 1])
	           || int4send(length(convert_to(($6::text[])[ch.i + 1], 'UTF8'))) || convert_to(($6::text[])[ch.i + 1], 'UTF8')
	           || int4send(length(convert_to(($3::text[])[ch.i + 1], 'UTF8'))) || convert_to(($3::text[])[ch.i + 1], 'UTF8')
	           || int4send(length(convert_to(($7::text[])[ch.i + 1], 'UTF8'))) || convert_to(($7::text[])[ch.i + 1], 'UTF8')
	           || int8send(s.us)
	           || int4send(length(ch.hash)) || ch.hash
	           || int4send(length(($8::bytea[])[ch.i + 1])) || ($8::bytea[])[ch.i + 1])
	  FROM ch, s
	 WHERE ch.i < cardinality($3::text[])
),
h AS (
	UPDATE worlds w
	   SET position = s.position + cardinality($3::text[]), last_time = s.now, last_hash = f.hash
	  FROM s, c, ch f
	 WHERE w.id = $1 AND f.i = cardinality($3::text[])
	   AND w.position = s.position AND w.last_hash = s.last_hash AND w.last_time = s.last_time
	   AND w.epoch = ALL($4::bigint[]) AND w.holder <> '' AND w.holder = ALL($3::text[])
	   AND w.expires_at > greatest(c.t, w.last_time)
	   AND w.granted_position <= ALL($5::bigint[]) AND w.position >= ALL($5::bigint[])
	   AND CASE WHEN octet_length($10::bytea) > 0
	            THEN ($9::bigint[])[1] = w.position + 1 AND octet_length(w.holder_key) > 0
	                 AND w.holder_key = $11::bytea AND $12::boolean
	            ELSE octet_length(w.holder_key) = 0 END
	   /*key*/
	RETURNING s.position AS first, w.last_time, w.expires_at, w.epoch, w.holder, clock_timestamp() AS locked_time,
	          ` + notifyInline + `
),
e AS (
	INSERT INTO journal_entries (world, position, epoch, kind, holder, key, payload, store_time,
	    prev_hash, hash, signature)
	SELECT $1, h.first + ch.i, ($4::bigint[])[ch.i], ($6::text[])[ch.i], ($3::text[])[ch.i], ($7::text[])[ch.i],
	       ($8::bytea[])[ch.i], h.last_time, ch.prev, ch.hash,
	       CASE WHEN ch.i = cardinality($3::text[]) THEN $10::bytea ELSE ''::bytea END
	  FROM h, ch
	 WHERE ch.i > 0
	   AND CASE WHEN h.expires_at > greatest(coalesce($2::timestamptz, h.locked_time), h.last_time) THEN true
	            ELSE leasehold_append_expired_under_lock($1) END
	RETURNING position, epoch, holder
)
(SELECT e.position, NULL::text, e.epoch, e.holder, NULL::bytea FROM e ORDER BY e.position)
UNION ALL
SELECT o_position, o_reason, o_epoch, o_holder, o_key
  FROM leasehold_journal_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
 WHERE NOT EXISTS (SELECT 1 FROM h)`

// distinctKeys reports whether the batch's non-empty keys are all
// different: appendManySQL's precondition.
func distinctKeys(p *driver.JournalAppendParams) bool {
	var seen map[string]struct{}
	for i := range p.Requests {
		k := p.Requests[i].Key
		if k == "" {
			continue
		}
		if seen == nil {
			seen = make(map[string]struct{}, len(p.Requests)-i)
		}
		if _, dup := seen[k]; dup {
			return false
		}
		seen[k] = struct{}{}
	}
	return true
}
