package sim

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/journal"
)

// The hot-world band in host mode (Knobs.Band): every host runs the
// shipped band (host/band.go) with thresholds scaled to the simulation's
// trickle of commands — a window with any turn in it is "hot", one
// without is "clear" — so the world spills from its home (node-0) while
// commands flow and is handed back once they pause. The moves are the
// host's own (judgeBand → the mover's prepare, the note, the handoff, the
// mover's acquire); the simulator supplies only the Mover, over its
// network, and checks the journal after (InvBand).

// InvBand: every handoff in a band run is a band transition journaled
// before it — the holder's last data entry under the epoch it hands off
// is a host.band entry naming the same receiver, with a reason and the
// load that triggered it, the load on the right side of the thresholds,
// "spill" from the home and "home" back to it. (No position with two
// writers is InvJournal's and the world model's, as for every handoff.)
const InvBand = "band"

// Band thresholds: a window with a turn in it is above the entry
// threshold, one without is below the exit threshold (ExitRatio 0.5).
const (
	bandTurnsPerSecond = 1e-9
	bandExitRatio      = 0.5
)

// band is a host's hot-world policy in a band run: judged every T_renew,
// a spill after one more window of load, a handback after two clear
// windows; the spill pool is every other node.
func (p *proc) band() *host.Band {
	tm := p.s.knobs.Timing
	var spill []string
	for _, q := range p.s.procs {
		if q.id != 0 {
			spill = append(spill, nodeName(q.id))
		}
	}
	return &host.Band{TurnsPerSecond: bandTurnsPerSecond, ExitRatio: bandExitRatio,
		Window: tm.Renew, Sustain: tm.Renew, Clear: 2 * tm.Renew, Spill: spill, Mover: &simMover{p: p}}
}

// simMover reaches the receiving host of a band move over the simulated
// network, from the host's own move thread.
type simMover struct{ p *proc }

var _ host.Mover = (*simMover)(nil)

func (m *simMover) peer(node string) (*proc, error) {
	for _, q := range m.p.s.procs {
		if nodeName(q.id) == node {
			return q, nil
		}
	}
	return nil, fmt.Errorf("sim: no process is node %q", node)
}

func (m *simMover) PrepareOn(_ context.Context, w, node string) error {
	q, err := m.peer(node)
	if err != nil {
		return err
	}
	p := m.p
	return p.hostRPC(p.s.loop.cur, q, "band prepare", 2*p.s.knobs.CallTimeout, func(ctx context.Context, h *host.Host) error {
		return h.Prepare(ctx, w)
	})
}

func (m *simMover) AcquireOn(_ context.Context, w, node string) error {
	q, err := m.peer(node)
	if err != nil {
		return err
	}
	p := m.p
	return p.hostRPC(p.s.loop.cur, q, "band acquire", 3*p.s.knobs.CallTimeout, func(ctx context.Context, h *host.Host) error {
		return h.Acquire(ctx, w)
	})
}

// bandNote is a host.band entry's payload, as the host writes it.
type bandNote struct {
	State  string `json:"state"`
	To     string `json:"to"`
	Reason string `json:"reason"`
	Load   struct {
		TurnsPerSecond float64 `json:"turns_per_second"`
	} `json:"load"`
}

// finalBand checks InvBand on the journal at the end of a band run.
func (o *oracle) finalBand(entries []journal.Entry) {
	s := o.s
	home := nodeName(0)
	for i := range entries {
		e := &entries[i]
		if e.Kind != journal.KindHandedOff {
			continue
		}
		var ho journal.HandedOff
		if err := json.Unmarshal(e.Payload, &ho); err != nil {
			o.fail(InvBand, "handoff at %d: %v", e.Position, err)
			continue
		}
		// The holder's last data entry under the epoch: lease renewals
		// (its keeper's drain may land between the note and the handoff)
		// and other holders' journaled refusals may sit between.
		j := i - 1
		for j >= 0 && (entries[j].Kind == journal.KindRenewed || entries[j].Kind == journal.KindRejected) {
			j--
		}
		if j < 0 || entries[j].Kind != host.BandKind || entries[j].Holder != ho.From || entries[j].Epoch != ho.Epoch-1 {
			o.fail(InvBand, "the handoff at %d from %s to %s (epoch %d) has no band transition journaled before it", e.Position, ho.From, ho.To, ho.Epoch-1)
			continue
		}
		var n bandNote
		if err := json.Unmarshal(entries[j].Payload, &n); err != nil {
			o.fail(InvBand, "the band entry at %d: %v", entries[j].Position, err)
			continue
		}
		switch {
		case n.To != ho.To:
			o.fail(InvBand, "the band entry at %d moves the world to %s, the handoff at %d to %s", entries[j].Position, n.To, e.Position, ho.To)
		case n.Reason == "":
			o.fail(InvBand, "the band entry at %d carries no reason", entries[j].Position)
		case n.State == "spill" && (ho.From != home || ho.To == home || n.Load.TurnsPerSecond <= bandTurnsPerSecond):
			o.fail(InvBand, "the spill at %d from %s to %s under load %g is not the band's rule", entries[j].Position, ho.From, ho.To, n.Load.TurnsPerSecond)
		case n.State == "home" && (ho.From == home || ho.To != home || n.Load.TurnsPerSecond >= bandTurnsPerSecond*bandExitRatio):
			o.fail(InvBand, "the handback at %d from %s to %s under load %g is not the band's rule", entries[j].Position, ho.From, ho.To, n.Load.TurnsPerSecond)
		case n.State != "spill" && n.State != "home":
			o.fail(InvBand, "the band entry at %d has state %q", entries[j].Position, n.State)
		default:
			s.hs.bandMoves++
		}
	}
}
