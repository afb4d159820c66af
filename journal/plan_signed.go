package journal

import (
	"fmt"
	"time"
)

// planSigned plans a signed batch (journal/sign.go), written whole or not
// at all. The checks run in this order, which the Postgres append function
// repeats (driver/postgres/migrations/0008_signatures.sql):
//
//  1. input: each request (ValidateAppend) and the batch's shape
//     (ValidateSignedBatch) — an *InputError for every request;
//  2. keys: if any key was appended already, those requests are answered
//     with its position and the others refused ReasonMoved (the batch's
//     positions no longer hold; the holder signs the rest again);
//  3. the append rule (CheckAppend) on every request: the first refusal
//     refuses them all, journaled once as usual;
//  4. positions: the first must be the head + 1, else ReasonMoved;
//  5. the signature, against the key the epoch's grant carries: none, or
//     one that does not verify, refuses them all with ReasonBadSignature,
//     journaled like the lease refusals.
func planSigned(s State, now time.Time, reqs []AppendRequest, alreadyRejected func(holder string) bool, appended KeyLookup) (Plan, []AppendOutcome) {
	b := newBuilder(s, now)
	out := make([]AppendOutcome, len(reqs))
	all := func(err error) (Plan, []AppendOutcome) {
		for i := range out {
			out[i].Err = err
		}
		return b.done(), out
	}
	cp := make([]AppendRequest, len(reqs))
	for i := range reqs {
		cp[i] = reqs[i]
		if err := ValidateAppend(&cp[i]); err != nil {
			return all(fmt.Errorf("request %d of a signed batch: %w", i, err))
		}
	}
	if err := ValidateSignedBatch(cp); err != nil {
		return all(err)
	}
	first := &cp[0]
	if appended != nil {
		dup := false
		for i := range cp {
			if cp[i].Key == "" {
				continue
			}
			if pos, ok := appended(cp[i].Key); ok {
				out[i].Position, dup = pos, true
			}
		}
		if dup {
			moved := s.refused("append", first.Holder, first.Epoch, ReasonMoved)
			for i := range out {
				if out[i].Position == 0 {
					out[i].Err = moved
				}
			}
			return b.done(), out
		}
	}
	reason := Reason("")
	for i := range cp {
		if reason = CheckAppend(s, b.now, &cp[i]); reason != "" {
			break
		}
	}
	if reason == "" && first.Position != s.Position+1 {
		reason = ReasonMoved
	}
	if reason == "" {
		entries := make([]Entry, len(cp))
		for i, r := range cp {
			entries[i] = Entry{World: s.World, Position: r.Position, Epoch: r.Epoch, Kind: r.Kind, Holder: r.Holder,
				Key: r.Key, Payload: r.Payload}
		}
		if !VerifyBatch(s.HolderKey, entries, cp[len(cp)-1].Signature) {
			reason = ReasonBadSignature
		}
	}
	if reason != "" {
		if reason.Journaled() && !alreadyRejected(first.Holder) {
			b.plan.Rejected = append(b.plan.Rejected, first.Holder)
			b.add(KindRejected, s.Holder, s.Epoch, "", mustMarshal(Rejected{Holder: first.Holder, Epoch: first.Epoch, Reason: reason}))
		}
		return all(s.refused("append", first.Holder, first.Epoch, reason))
	}
	b.plan.Entries = make([]Entry, 0, len(cp))
	// VerifyBatch chained the batch from a fresh digest: the builder's fold
	// would chain it the same way only from a state with no unsigned run
	// open, and then need not do it again.
	b.verified = s.SignFrom == 0
	for i, r := range cp {
		b.plan.Cond.MaxGrantedAt = min(b.plan.Cond.MaxGrantedAt, r.SeenPosition)
		b.addSigned(r.Kind, r.Holder, r.Epoch, r.Key, r.Payload, r.Signature)
		out[i].Position = b.s.Position
	}
	b.plan.Cond.CheckHolder, b.plan.Cond.Holder, b.plan.Cond.Expiry = true, s.Holder, ExpiryLive
	return b.done(), out
}

// BindKeys writes into a plan's grants and handoffs the public key the
// new holder has registered (lookup returns nil for none), and re-seals
// the plan's chain. Drivers call it in the lease change's transaction,
// after planning and before writing, so the key in force for an epoch is
// the one registered when it was granted: a node that registers a new key
// signs with it from its next grant on, and entries appended before keep
// verifying under the key their epoch's grant carries.
func BindKeys(p *Plan, lookup func(holder string) ([]byte, error)) error {
	bound := false
	for i := range p.Entries {
		e := &p.Entries[i]
		var key []byte
		var err error
		switch e.Kind {
		case KindGranted:
			var g Granted
			if err = decodeStrict(e.Payload, &g); err == nil {
				if key, err = lookup(g.Holder); err == nil && key != nil {
					g.Key = EncodeKey(key)
					e.Payload = mustMarshal(g)
				}
			}
		case KindHandedOff:
			var h HandedOff
			if err = decodeStrict(e.Payload, &h); err == nil {
				if key, err = lookup(h.To); err == nil && key != nil {
					h.Key = EncodeKey(key)
					e.Payload = mustMarshal(h)
				}
			}
		}
		if err != nil {
			return err
		}
		bound = bound || key != nil
	}
	if !bound {
		return nil
	}
	s := p.Before
	for i := range p.Entries {
		e := &p.Entries[i]
		e.PrevHash = s.LastHash
		Seal(e)
		n, err := Fold(s, e)
		if err != nil {
			return fmt.Errorf("journal: binding keys: %w", err)
		}
		s = n
	}
	p.After = s
	return nil
}
