package sim

import (
	"context"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
)

// worldStore is the store of record as one thread of a process sees it:
// world.Holder's Store, each call carried through the simulated network
// (p.call on thread t: latency, loss, store errors, partitions) to the
// real SQLite driver. At the store side, as each call is applied, it
// records what only the store can see at that instant: the porcupine
// world history (sim/history_world.go) and the oracle's fence check of
// each accepted append; at the client side, the appends acknowledged.
//
// The caller's context is not passed on: a request lands when the network
// delivers it, even after its process died (the caller's timeout is the
// network's, CallTimeout).
type worldStore struct {
	p *proc
	t *thread
	// ask says what a lease change is asking, for the history: the op's
	// kind, the writer and its epoch, the handoff's target. The holder's
	// program knows it; the driver's params do not carry it.
	ask func(op string) worldInput
}

var _ world.Store = (*worldStore)(nil)

func (ws *worldStore) WorldGet(_ context.Context, params *driver.WorldGetParams) (*driver.World, error) {
	s := ws.p.s
	var w *driver.World
	err := ws.p.call(ws.t, "world-get", s.knobs.CallTimeout, func() error {
		var err error
		w, err = s.store.WorldGet(context.Background(), params)
		return err
	})
	return w, err
}

func (ws *worldStore) LeaseChange(_ context.Context, params *driver.LeaseChangeParams) (*driver.World, error) {
	p, s := ws.p, ws.p.s
	var w *driver.World
	hop := s.worldHistory.begin(p.id, ws.ask(params.Op))
	err := p.call(ws.t, "world-"+params.Op, s.knobs.CallTimeout, func() error {
		var err error
		w, err = s.store.LeaseChange(context.Background(), params)
		if err == nil {
			s.worldHistory.applied(hop, worldOutput{ok: true, epoch: w.Epoch, holder: w.Holder, positions: []int64{w.Position}})
		} else {
			s.worldHistory.applied(hop, worldOutput{ok: false})
		}
		return err
	})
	s.worldHistory.answered(hop, err != errTimeout)
	return w, err
}

func (ws *worldStore) JournalAppend(_ context.Context, params *driver.JournalAppendParams) ([]journal.AppendOutcome, error) {
	p, s := ws.p, ws.p.s
	reqs := params.Requests
	var outs []journal.AppendOutcome
	in := worldInput{kind: wAppend}
	if len(reqs) > 0 {
		in.holder, in.epoch = reqs[0].Holder, reqs[0].Epoch
	}
	s.oracle.appendSent(p, reqs)
	hop := s.worldHistory.begin(p.id, in)
	err := p.call(ws.t, "append", s.knobs.CallTimeout, func() error {
		var err error
		outs, err = s.store.JournalAppend(context.Background(), params)
		if err == nil {
			s.oracle.appended(p, reqs, outs)
			out := worldOutput{ok: true}
			for _, o := range outs {
				if o.Err == nil {
					out.positions = append(out.positions, o.Position)
				}
			}
			s.worldHistory.applied(hop, out)
		}
		return err
	})
	s.worldHistory.answered(hop, err != errTimeout)
	if err != nil {
		return nil, err
	}
	// Acknowledged: the holder has its positions. Each must be found
	// there at the end (the journal invariant).
	for i, o := range outs {
		if o.Err == nil {
			s.oracle.ackedEntries = append(s.oracle.ackedEntries, ackedEntry{position: o.Position, payload: reqs[i].Payload})
		}
	}
	return outs, nil
}
