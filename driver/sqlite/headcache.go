package sqlite

import (
	"database/sql"
	"sync"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// headRow is a head as stored (world_heads: the worlds row's lease, the
// last entry's tail): the columns of worldColumns in their SQL encoding. A row read back decodes (world) to exactly the World
// scanWorld returns, so a plan made from a remembered row is the plan a
// fresh read would have made — provided the stored row still equals it.
type headRow struct {
	id, home, holder                                 string
	defTerm, position, lastTime, epoch, term, grantd int64
	created                                          int64
	expires                                          sql.NullInt64
	lastHash, holderKey                              []byte
}

func scanHead(r rowScanner) (headRow, error) {
	var h headRow
	err := r.Scan(&h.id, &h.home, &h.defTerm, &h.position, &h.lastHash, &h.lastTime, &h.epoch, &h.holder,
		&h.term, &h.expires, &h.grantd, &h.created, &h.holderKey)
	return h, err
}

// world decodes the row.
func (h *headRow) world() *driver.World {
	w := driver.World{State: journal.State{World: h.id, Position: h.position, LastHash: h.lastHash,
		LastTime: fromMicros(h.lastTime), Epoch: h.epoch, Holder: h.holder,
		Term: time.Duration(h.term) * time.Microsecond, GrantedAt: h.grantd, HolderKey: h.holderKey},
		Home: h.home, DefaultTerm: time.Duration(h.defTerm) * time.Microsecond, CreatedAt: fromMicros(h.created)}
	if len(w.LastHash) == 0 {
		w.LastHash = nil
	}
	if len(w.HolderKey) == 0 {
		w.HolderKey = nil
	}
	if h.expires.Valid {
		w.ExpiresAt = fromMicros(h.expires.Int64)
	}
	return &w
}

// after is the row once the conditional write of a plan whose After is a
// has been applied to h: the columns condUpdate and the entries set,
// encoded as they encode them (an append sets no lease column; the others
// then already equal these, see sameLease).
func (h headRow) after(a *journal.State) headRow {
	h.position, h.lastHash, h.lastTime = a.Position, nonNil(a.LastHash), a.LastTime.UnixMicro()
	h.epoch, h.holder, h.term, h.grantd, h.holderKey = a.Epoch, a.Holder, int64(a.Term/time.Microsecond), a.GrantedAt, nonNil(a.HolderKey)
	h.expires = sql.NullInt64{}
	if a.Held() {
		h.expires = sql.NullInt64{Int64: a.ExpiresAt.UnixMicro(), Valid: true}
	}
	return h
}

// maxHeads bounds the remembered heads; past it one is forgotten per new
// one (a forgotten head is read again, nothing more).
const maxHeads = 4096

// heads remembers each world's row as this store last committed it, so
// that the next change to the world can skip reading it (tailGuard's known
// checks it instead). Staleness is harmless — another process's write, a
// renewal, a rolled-back or failed commit: the check fails and the change
// reads the head as before — so entries are only ever replaced or dropped
// at a size bound, never invalidated.
type heads struct {
	mu sync.Mutex
	m  map[string]headRow
}

func (c *heads) get(world string) (headRow, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.m[world]
	return h, ok
}

func (c *heads) put(h headRow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]headRow{}
	}
	if _, ok := c.m[h.id]; !ok && len(c.m) >= maxHeads {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[h.id] = h
}
