package sim

import (
	"context"

	"github.com/anishathalye/porcupine"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/journal"
)

// hostStore is the store of record as one process's shipped host.Host
// sees it: host.Store (the holder's calls, WorldCreate, the mirror's
// JournalRead), driver.WorldRenewer (the host's world keeper drains
// through it) and driver.NodeKeyStore (the host registers its key, and
// signs every batch under an epoch whose grant carries it). Each call
// goes through the simulated network on the calling thread — the host's
// own threads: its world loop, its keeper, its effect calls, and the
// submitters and handlers of the process — under the caller's simulated
// deadline, as runStore's do. At the store side it records what
// worldStore records: the world history and the oracle's fence and
// belief checks of each append.
type hostStore struct{ p *proc }

var (
	_ host.Store           = (*hostStore)(nil)
	_ driver.WorldRenewer  = (*hostStore)(nil)
	_ driver.NodeKeyStore  = (*hostStore)(nil)
	_ driver.SnapshotStore = (*hostStore)(nil)
)

func (hs *hostStore) via(ctx context.Context, name string, op func() error) error {
	p := hs.p
	return p.callCtx(p.s.loop.cur, name, ctx, p.s.knobs.CallTimeout, op)
}

func (hs *hostStore) WorldGet(ctx context.Context, params *driver.WorldGetParams) (*driver.World, error) {
	var w *driver.World
	err := hs.via(ctx, "world-get", func() error {
		var err error
		w, err = hs.p.s.store.WorldGet(context.Background(), params)
		return err
	})
	return w, err
}

func (hs *hostStore) WorldCreate(ctx context.Context, params *driver.WorldCreateParams) (*driver.World, error) {
	var w *driver.World
	err := hs.via(ctx, "world-create", func() error {
		var err error
		w, err = hs.p.s.store.WorldCreate(context.Background(), params)
		return err
	})
	return w, err
}

func (hs *hostStore) JournalRead(ctx context.Context, params *driver.JournalReadParams) ([]journal.Entry, error) {
	var es []journal.Entry
	err := hs.via(ctx, "journal-read", func() error {
		var err error
		es, err = hs.p.s.store.JournalRead(context.Background(), params)
		return err
	})
	return es, err
}

func (hs *hostStore) NodeKeyRegister(ctx context.Context, params *driver.NodeKeyRegisterParams) (*driver.NodeKey, error) {
	var k *driver.NodeKey
	err := hs.via(ctx, "node-key-register", func() error {
		var err error
		k, err = hs.p.s.store.NodeKeyRegister(context.Background(), params)
		return err
	})
	return k, err
}

func (hs *hostStore) NodeKeyGet(ctx context.Context, params *driver.NodeKeyGetParams) (*driver.NodeKey, error) {
	var k *driver.NodeKey
	err := hs.via(ctx, "node-key-get", func() error {
		var err error
		k, err = hs.p.s.store.NodeKeyGet(context.Background(), params)
		return err
	})
	return k, err
}

// WorldSnapshotPut stores a host's snapshot (host/snapshot.go). A
// snapshot is a cache, not a record: the world history does not see it;
// a wrong one would show as a wrong state, which the oracle's checks of
// the acknowledged commands and the payouts catch.
func (hs *hostStore) WorldSnapshotPut(ctx context.Context, params *driver.WorldSnapshotPutParams) error {
	return hs.via(ctx, "world-snapshot-put", func() error {
		err := hs.p.s.store.WorldSnapshotPut(context.Background(), params)
		if err == nil {
			hs.p.s.hs.snapsPut++
		}
		return err
	})
}

// WorldSnapshotGet reads the snapshot a host's empty mirror restores.
func (hs *hostStore) WorldSnapshotGet(ctx context.Context, params *driver.WorldSnapshotGetParams) (*driver.WorldSnapshot, error) {
	var snap *driver.WorldSnapshot
	err := hs.via(ctx, "world-snapshot-get", func() error {
		var err error
		snap, err = hs.p.s.store.WorldSnapshotGet(context.Background(), params)
		if err == nil {
			hs.p.s.hs.snapsGot++
		}
		return err
	})
	return snap, err
}

// LeaseChange records the change in the world history. The holder's
// params do not say the epoch it asks under; the store's answer does (a
// renewal keeps the epoch, a handoff moves it one up), and a refusal is
// always allowed by the model, so the input is filled in as it applies.
func (hs *hostStore) LeaseChange(ctx context.Context, params *driver.LeaseChangeParams) (*driver.World, error) {
	p, s := hs.p, hs.p.s
	me := nodeName(p.id)
	in := worldInput{kind: wRenew, holder: me}
	if params.Op == "handoff" {
		in.kind = wHandoff
	}
	hop := s.worldHistory.begin(p.id, in)
	var w *driver.World
	err := hs.via(ctx, "world-"+params.Op, func() error {
		var err error
		w, err = s.store.LeaseChange(context.Background(), params)
		if err == nil {
			in.epoch = w.Epoch
			if in.kind == wHandoff {
				in.epoch, in.to = w.Epoch-1, w.Holder
				s.hs.handoffs++
				s.loop.logf("%s hands %s epoch %d to %s (position %d)", p.owner, worldID, w.Epoch-1, w.Holder, w.Position)
			}
			hop.Input = in
			s.worldHistory.applied(hop, worldOutput{ok: true, epoch: w.Epoch, holder: w.Holder, positions: []int64{w.Position}})
		} else {
			s.worldHistory.applied(hop, worldOutput{ok: false})
		}
		return err
	})
	s.worldHistory.answered(hop, err != errTimeout)
	return w, err
}

// WorldRenewMany is the keeper's drain; each extension is a renewal in
// the world history.
func (hs *hostStore) WorldRenewMany(ctx context.Context, params *driver.WorldRenewManyParams) ([]driver.WorldRenewOutcome, error) {
	p, s := hs.p, hs.p.s
	var outs []driver.WorldRenewOutcome
	var ops []*porcupine.Operation
	sent := int64(s.loop.now)
	err := hs.via(ctx, "world-drain", func() error {
		var err error
		outs, err = s.store.WorldRenewMany(context.Background(), params)
		if err != nil {
			return err
		}
		for i, o := range outs {
			if o.Err != nil || !params.Worlds[i].Extend || o.World == nil {
				continue
			}
			w := o.World
			hop := s.worldHistory.begin(p.id, worldInput{kind: wRenew, holder: params.Holder, epoch: params.Worlds[i].Epoch})
			hop.Call = sent
			s.worldHistory.applied(hop, worldOutput{ok: true, epoch: w.Epoch, holder: w.Holder, positions: []int64{w.Position}})
			ops = append(ops, hop)
		}
		return nil
	})
	for _, r := range ops {
		s.worldHistory.answered(r, err == nil)
	}
	return outs, err
}

func (hs *hostStore) JournalAppend(ctx context.Context, params *driver.JournalAppendParams) ([]journal.AppendOutcome, error) {
	p, s := hs.p, hs.p.s
	reqs := params.Requests
	var outs []journal.AppendOutcome
	in := worldInput{kind: wAppend}
	if len(reqs) > 0 {
		in.holder, in.epoch = reqs[0].Holder, reqs[0].Epoch
	}
	s.oracle.appendSent(p, reqs)
	hop := s.worldHistory.begin(p.id, in)
	err := hs.via(ctx, "append", func() error {
		// A key the journal holds already is answered with its first
		// position: not a new entry, so not one for the history.
		head, err := s.store.WorldGet(context.Background(), &driver.WorldGetParams{World: worldID})
		if err != nil {
			panic(err)
		}
		outs, err = s.store.JournalAppend(context.Background(), params)
		if err == nil {
			var newReqs []journal.AppendRequest
			var newOuts []journal.AppendOutcome
			for i, o := range outs {
				if o.Err == nil && o.Position > head.Position {
					newReqs, newOuts = append(newReqs, reqs[i]), append(newOuts, o)
				}
			}
			s.oracle.appended(p, newReqs, newOuts)
			out := worldOutput{ok: true}
			for _, o := range outs {
				if o.Err == nil && o.Position > head.Position {
					out.positions = append(out.positions, o.Position)
				}
			}
			s.worldHistory.applied(hop, out)
		}
		return err
	})
	s.worldHistory.answered(hop, err != errTimeout)
	return outs, err
}
