package driver

import (
	"context"
	"hash/fnv"
	"time"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// HomeStore is the home pool (SPEC §4 "Holders and home"): the replicas
// that serve as a world's home, each a member while it renews its
// membership. A world's Home names a pool; the expiry sweep grants an
// expired world to one of the pool's live replicas (HomeGrantee), or to
// the Home name itself when the pool has none.
type HomeStore interface {
	// HomeJoin makes p.Node a member of p.Pool until store now + p.Term:
	// it inserts the replica or extends it (joining and renewing are the
	// same call).
	HomeJoin(ctx context.Context, p *HomeJoinParams) (*HomeReplica, error)
	// HomeLeave removes p.Node from p.Pool (a clean stop); leaving a pool
	// one is not in is not an error.
	HomeLeave(ctx context.Context, p *HomeLeaveParams) error
	// HomeLive lists the replicas of p.Pool whose membership has not
	// expired on the store clock, ordered by node.
	HomeLive(ctx context.Context, p *HomeLiveParams) ([]HomeReplica, error)
}

// HomeReplica is one member of a home pool.
type HomeReplica struct {
	Pool      string
	Node      string
	ExpiresAt time.Time // store clock
}

// HomeJoinParams joins (or renews) one replica of a pool.
type HomeJoinParams struct {
	Pool string
	Node string
	// Term is the membership's term, with a world term's rule
	// (journal.ValidateTerm) and form: whole milliseconds, rounded up
	// (journal.NormalizeTerm), so a 1ns term is a live 1ms one.
	Term time.Duration
}

// Class implements lease.Classed: membership decides who is granted a
// world, so it is written like a lease.
func (*HomeJoinParams) Class() lease.Durability { return lease.SyncCritical }

// HomeLeaveParams names the replica leaving a pool.
type HomeLeaveParams struct {
	Pool string
	Node string
}

// Class implements lease.Classed.
func (*HomeLeaveParams) Class() lease.Durability { return lease.SyncCritical }

// HomeLiveParams names a pool.
type HomeLiveParams struct{ Pool string }

// Validate checks the pool, the node and the term (a world term's rule).
func (p *HomeJoinParams) Validate() error {
	if err := journal.ValidateID("pool", p.Pool); err != nil {
		return err
	}
	if err := journal.ValidateID("node", p.Node); err != nil {
		return err
	}
	return journal.ValidateTerm(p.Term)
}

// normalized returns a valid copy whose term is in the journal's form.
func (p *HomeJoinParams) normalized() (*HomeJoinParams, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q := *p
	q.Term = journal.NormalizeTerm(p.Term)
	return &q, nil
}

// Validate checks the pool and the node.
func (p *HomeLeaveParams) Validate() error {
	if err := journal.ValidateID("pool", p.Pool); err != nil {
		return err
	}
	return journal.ValidateID("node", p.Node)
}

// Validate checks the pool.
func (p *HomeLiveParams) Validate() error { return journal.ValidateID("pool", p.Pool) }

// HomeGrantee is the rule of SPEC §4 "Expiry" for whom the sweep grants an
// expired world: one of the pool's live replicas (live, sorted by node, as
// HomeLive returns them) other than expired, the holder whose lease just
// expired (presumed dead or cut off). The choice is deterministic and
// spread across worlds: the FNV-1a hash of the world id modulo the number
// of candidates. ok is false when there is no candidate; the sweep then
// grants the world's Home name, as it did before pools.
func HomeGrantee(world, expired string, live []HomeReplica) (node string, ok bool) {
	cands := make([]string, 0, len(live))
	for _, r := range live {
		if r.Node != expired {
			cands = append(cands, r.Node)
		}
	}
	if len(cands) == 0 {
		return "", false
	}
	h := fnv.New32a()
	h.Write([]byte(world))
	return cands[h.Sum32()%uint32(len(cands))], true
}
