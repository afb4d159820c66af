package sqlite

import (
	"fmt"
	"strings"

	"github.com/leasehold/leasehold/journal"
)

// An append that leaves the lease as it was (sameLease: every append)
// writes its entries and nothing else: the journal's tail is its last entry
// (world_heads, migration 0016), so there is no head row to move and the
// commit carries the entry's page alone. The fence is checked inside the
// writing statement, as condUpdate checks it inside its UPDATE: the first
// INSERT of the plan's entries is an INSERT … SELECT whose WHERE is the
// plan's Cond (tailGuard) — the lease columns of the worlds row (epoch,
// holder, expiry on the store clock, granted position) and the position
// compare-and-swap against the world's last entry. If the WHERE does not
// hold it inserts no row and nothing of the plan is written; the entries
// after it (a batch past one statement) follow under the same write lock,
// as condUpdate's entries follow it.

// tailGuard is the WHERE of a guarded entry INSERT whose VALUES take the
// parameters ?1 … ?base; the guard's own are ?base+1 … :
//
//	+1 world, +2 the Cond's position, +3 epoch, +4 check holder (0/1),
//	+5 holder, +6 expiry check (0/1/2), +7 now, +8 max granted position
//
// known (a plan made from a remembered head, not one read in the
// transaction) also asserts that the head equals the remembered row (as
// the UPDATE before migration 0016 did): every lease column of the worlds row and the last
// entry's position, hash and store time —
//
//	+9 home, +10 default term, +11 position, +12 last hash, +13 last
//	time, +14 epoch, +15 holder, +16 term, +17 expires_at (or NULL),
//	+18 granted position, +19 created at, +20 holder key
func tailGuard(base int, known bool) string {
	p := func(i int) string { return fmt.Sprintf("?%d", base+i) }
	var b strings.Builder
	fmt.Fprintf(&b, `
WHERE EXISTS (SELECT 1 FROM worlds WHERE id = %[1]s
  AND epoch = %[3]s
  AND (%[4]s = 0 OR holder = %[5]s)
  AND (%[6]s = 0 OR (%[6]s = 1 AND expires_at > %[7]s) OR (%[6]s = 2 AND expires_at <= %[7]s))
  AND granted_position <= %[8]s`, p(1), p(2), p(3), p(4), p(5), p(6), p(7), p(8))
	if known {
		fmt.Fprintf(&b, `
  AND home = %s AND default_term_us = %s AND epoch = %s AND holder = %s AND term_us = %s
  AND expires_at IS %s AND granted_position = %s AND created_at = %s AND holder_key = %s`,
			p(9), p(10), p(14), p(15), p(16), p(17), p(18), p(19), p(20))
	}
	b.WriteString(")")
	if known {
		fmt.Fprintf(&b, `
  AND %[2]s = %[11]s
  AND (SELECT position, hash, store_time FROM journal_entries WHERE world = %[1]s ORDER BY position DESC LIMIT 1)
    = (%[11]s, %[12]s, %[13]s)`, p(1), p(2), p(3), p(4), p(5), p(6), p(7), p(8), p(9), p(10), p(11), p(12), p(13))
	} else {
		fmt.Fprintf(&b, `
  AND (SELECT position FROM journal_entries WHERE world = %[1]s ORDER BY position DESC LIMIT 1) = %[2]s`, p(1), p(2))
	}
	return b.String()
}

// guardedInsert is the INSERT of rows entries (?1 … ?11*rows, eleven a
// row in insertEntryHead's order) that writes them only where tailGuard
// holds.
func guardedInsert(rows int, known bool) string {
	var b strings.Builder
	b.WriteString(insertEntryHead)
	// One row is a SELECT of its parameters: a VALUES subquery of one row
	// would be a co-routine that SQLite pushes the guard down into, and
	// then checks the guard twice.
	if rows == 1 {
		b.WriteString("\nSELECT ")
	} else {
		b.WriteString("\nSELECT * FROM (VALUES ")
	}
	n := 0
	for r := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		if rows > 1 {
			b.WriteByte('(')
		}
		for c := range 11 {
			if c > 0 {
				b.WriteString(", ")
			}
			n++
			fmt.Fprintf(&b, "?%d", n)
		}
		if rows > 1 {
			b.WriteByte(')')
		}
	}
	if rows > 1 {
		b.WriteByte(')')
	}
	b.WriteString(tailGuard(n, known))
	return b.String()
}

// tailGuardArgs are tailGuard's +1 … +8: the plan's Cond.
func tailGuardArgs(p *journal.Plan) []any {
	c := p.Cond
	return []any{p.After.World, c.Position, c.Epoch, int64(boolInt(c.CheckHolder)), c.Holder, int64(c.Expiry),
		c.Now.UnixMicro(), c.MaxGrantedAt}
}

// knownGuardArgs are tailGuard's +1 … +20 for a plan made from the
// remembered head h.
func knownGuardArgs(h *headRow, p *journal.Plan) []any {
	var expires any
	if h.expires.Valid {
		expires = h.expires.Int64
	}
	return append(tailGuardArgs(p), h.home, h.defTerm, h.position, nonNil(h.lastHash), h.lastTime,
		h.epoch, h.holder, h.term, expires, h.grantd, h.created, nonNil(h.holderKey))
}

// errGuard: a guarded INSERT inserted no row (its tailGuard did not hold);
// nothing of the plan is written.
var errGuard = fmt.Errorf("the conditional entry write matched no head")
