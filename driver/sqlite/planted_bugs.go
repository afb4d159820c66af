package sqlite

import (
	"strings"

	"github.com/leasehold/leasehold/internal/bugs"
)

// plantedCompleteBug drops the fence from the complete statement when the
// simulator's planted bug asks for it (a -tags simbugs build only; in any
// other build the switch is a false constant and sql comes back as is).
func plantedCompleteBug(sql string) string {
	if !bugs.SkipCompleteFence {
		return sql
	}
	return strings.Replace(sql, "AND fence = ?4 ", "AND (fence = ?4 OR 1) ", 1)
}

// plantedRevivalBug drops `expires_at > now` from the drain's renewal, for
// the planted bug that lets a drain revive an expired lease.
func plantedRevivalBug(sql string) string {
	if !bugs.DrainRevives {
		return sql
	}
	return strings.Replace(sql, revivalCheck, "AND (runs.expires_at > ? OR 1)", 1) // the same parameters: see valuesCTE
}

// revivalCheck is the drain renewal's expiry check that plantedRevivalBug
// removes (runRenewChunkSQL holds it; a test checks).
const revivalCheck = "AND runs.expires_at > ?"
