package journal

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/lease"
)

// fuzzStoreNow maps a fuzzed offset in milliseconds to a store time within
// ten years either side of the base journal's last entry, so every plan the
// fuzzer asks for has a store time the JSONL export can print.
func fuzzStoreNow(s State, ms int64) time.Time {
	const span = int64(10 * 365 * 24 * time.Hour / time.Millisecond)
	return s.LastTime.Add(time.Duration(ms%span) * time.Millisecond)
}

// fuzzBase is a world the plan fuzzers write to. Variant 0: node-a holds
// epoch 2 (granted at position 2) with a data entry after the grant; 1: the
// same, then revoked, so nobody holds epoch 2; 2: home holds epoch 1, fresh.
func fuzzBase(t testing.TB, variant uint8) []Entry {
	var j []Entry
	apply := func(p Plan, err error) State {
		require.NoError(t, err)
		j = append(j, p.Entries...)
		return p.After
	}
	s := apply(PlanCreate("w1", "home", 30*time.Second, t0))
	if variant%3 == 2 {
		return j
	}
	s = apply(PlanHandoff(s, t0.Add(time.Second), "home", "node-a", 1, 30*time.Second))
	p, out := PlanAppend(s, t0.Add(2*time.Second), []AppendRequest{{Holder: "node-a", Epoch: 2, SeenPosition: 2, Kind: "note", Payload: []byte(`{"n":1}`)}},
		func(string) bool { return false })
	require.NoError(t, out[0].Err)
	s = apply(p, nil)
	if variant%3 == 1 {
		apply(PlanRevoke(s, t0.Add(3*time.Second), 2, "operator"))
	}
	return j
}

// requireSound checks that a journal the planner built is one its audit
// accepts, folding to want, and that it survives a JSONL export and
// re-read byte for byte: every plan is importable.
func requireSound(t *testing.T, entries []Entry, want State) {
	t.Helper()
	rep := Audit(entries)
	require.True(t, rep.OK(), "planner built a journal its audit refuses: %v", rep.Violation)
	require.True(t, rep.Final.Equal(want), "fold %s != plan %s", rep.Final, want)

	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range entries {
		require.NoError(t, w.Write(&entries[i]))
	}
	require.NoError(t, w.Close())
	r := NewReader(bytes.NewReader(buf.Bytes()))
	var again bytes.Buffer
	w = NewWriter(&again)
	n := 0
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "export of a planned journal does not read back")
		require.NoError(t, w.Write(e))
		n++
	}
	require.NoError(t, w.Close())
	require.Equal(t, len(entries), n)
	require.Equal(t, buf.String(), again.String())
}

// TestJSONLNullPayloadRoundTrip is what FuzzPlanAppend found first: an
// empty payload is accepted and stored as JSON null (NormalizePayload's
// contract), the Writer exports it as "payload":null, and the Reader then
// refuses that very line with `missing field "payload"` — json.Unmarshal
// sets a *json.RawMessage to nil for null. So any world holding an append
// with an empty or null payload cannot be exported and re-imported, nor
// audited from its export (`leasehold audit --file`).
func TestJSONLNullPayloadRoundTrip(t *testing.T) {
	t.Parallel()
	p, err := PlanCreate("w1", "home", 30*time.Second, t0)
	require.NoError(t, err)
	entries := p.Entries
	p, out := PlanAppend(p.After, t0, []AppendRequest{{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "note"}},
		func(string) bool { return false })
	require.NoError(t, out[0].Err)
	require.Equal(t, "null", string(p.Entries[0].Payload))
	entries = append(entries, p.Entries...)

	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range entries {
		require.NoError(t, w.Write(&entries[i]))
	}
	require.NoError(t, w.Close())
	r := NewReader(&buf)
	for range entries {
		_, err := r.Next()
		require.NoError(t, err)
	}
}

// FuzzPlanAppend: any batch of appends, at any store time, against a held,
// a revoked and a fresh world, is planned without the planner refusing its
// own entries (it panics if it does). Each request is answered once: a
// position exactly when the append rule (stated here independently) admits
// it, else an *InputError or a *RefusedError for the first rule it breaks.
// The plan leaves the lease as it was, journals at most one append.rejected
// per refused holder (none if one is already journaled), does not touch the
// caller's requests, and exports and re-imports byte for byte.
func FuzzPlanAppend(f *testing.F) {
	f.Add(uint8(0), int64(3000), "node-a", int64(2), int64(2), "note", "k1", []byte(` {"a" : 1} `), false)
	f.Add(uint8(0), int64(3000), "home", int64(1), int64(0), "note", "", []byte(`{}`), false)
	f.Add(uint8(0), int64(30000), "node-a", int64(2), int64(3), "note", "", []byte(`[]`), true)
	f.Add(uint8(0), int64(3000), "node-a", int64(2), int64(1), "lease.granted", "", []byte(`{}`), false)
	f.Add(uint8(1), int64(3000), "node-a", int64(2), int64(2), "note", "", []byte(nil), false)
	f.Add(uint8(2), int64(-5000), "home", int64(1), int64(1), "x", "\x01", []byte(`{"a":`), false)
	f.Add(uint8(2), int64(29999), "home", int64(1), int64(1), "x", "é", []byte("\"\u2028<&>\""), false)
	f.Fuzz(func(t *testing.T, variant uint8, ms int64, holder string, epoch, seen int64, kind, key string, payload []byte, already bool) {
		base := fuzzBase(t, variant)
		s := Audit(base).Final
		now := fuzzStoreNow(s, ms)
		storeNow := StoreNow(s, now)

		r := AppendRequest{Holder: holder, Epoch: epoch, SeenPosition: seen, Kind: Kind(kind), Key: key, Payload: payload}
		good := r
		good.Holder, good.Epoch, good.SeenPosition = s.Holder, s.Epoch, s.Position
		reqs := []AppendRequest{r, good, r}
		before := slices.Clone(reqs)
		payloadBefore := slices.Clone(payload)

		p, out := PlanAppend(s, now, reqs, func(string) bool { return already })

		require.Equal(t, before, reqs, "PlanAppend modified its requests")
		require.Equal(t, payloadBefore, payload, "PlanAppend modified a payload")
		require.Len(t, out, len(reqs))
		refusedHolders := map[string]bool{}
		keys := map[string]int64{} // the key rule: a key appended once answers its first position
		lastPos, minSeen := s.Position, int64(-1)
		for i, req := range reqs {
			o := out[i]
			if !appendValid(&req) {
				var ie *InputError
				require.True(t, errors.As(o.Err, &ie), "request %d: invalid input answered %v", i, o.Err)
				require.ErrorIs(t, o.Err, lease.ErrInvalid)
				require.Zero(t, o.Position)
				continue
			}
			if first, ok := keys[req.Key]; ok && req.Key != "" {
				require.NoError(t, o.Err, "request %d: a retried key", i)
				require.Equal(t, first, o.Position, "request %d: a retried key answers its first position", i)
				continue
			}
			want := appendRule(s, storeNow, &req)
			if want == "" {
				require.NoError(t, o.Err, "request %d", i)
				require.Greater(t, o.Position, lastPos, "positions follow the batch order")
				lastPos = o.Position
				keys[req.Key] = o.Position
				if minSeen < 0 || req.SeenPosition < minSeen {
					minSeen = req.SeenPosition
				}
				continue
			}
			var re *RefusedError
			require.True(t, errors.As(o.Err, &re), "request %d: want refusal %s, got %v", i, want, o.Err)
			require.Equal(t, want, re.Reason, "request %d", i)
			require.ErrorIs(t, o.Err, want.Sentinel())
			require.Equal(t, s.Epoch, re.CurrentEpoch)
			require.Equal(t, s.Holder, re.CurrentHolder)
			require.Zero(t, o.Position)
			if want.Journaled() && !already {
				refusedHolders[req.Holder] = true
			}
		}

		// Appends never change the lease.
		a := p.After
		require.Equal(t, [3]any{s.Epoch, s.Holder, s.GrantedAt}, [3]any{a.Epoch, a.Holder, a.GrantedAt})
		require.True(t, a.ExpiresAt.Equal(s.ExpiresAt))

		var rejected []string
		for _, e := range p.Entries {
			if e.Kind == KindRejected {
				var rp Rejected
				require.NoError(t, decodeStrict(e.Payload, &rp))
				rejected = append(rejected, rp.Holder)
			}
		}
		require.ElementsMatch(t, rejected, p.Rejected)
		require.Len(t, rejected, len(refusedHolders), "one append.rejected per refused holder, none if already journaled")
		if minSeen >= 0 {
			require.Equal(t, Cond{Position: s.Position, Epoch: s.Epoch, CheckHolder: true, Holder: s.Holder,
				Expiry: ExpiryLive, Now: storeNow, MaxGrantedAt: minSeen}, p.Cond)
		}
		requireSound(t, append(slices.Clone(base), p.Entries...), p.After)
	})
}

// appendValid is ValidateAppend's contract, stated on its own.
func appendValid(r *AppendRequest) bool {
	_, perr := NormalizePayload(r.Payload)
	return idRule(r.Holder) && r.Epoch > 0 && r.SeenPosition >= 0 && idRule(string(r.Kind)) &&
		len(r.Kind) <= MaxKindBytes && !reserved(string(r.Kind)) && keyRule(r.Key) && perr == nil
}

// appendRule is SPEC §4's append rule in the order the refusals are named.
func appendRule(s State, now time.Time, r *AppendRequest) Reason {
	switch {
	case r.Epoch != s.Epoch:
		return ReasonStaleEpoch
	case s.Holder == "":
		return ReasonRevoked
	case r.Holder != s.Holder:
		return ReasonNotHolder
	case !now.Before(s.ExpiresAt):
		return ReasonExpired
	case r.SeenPosition < s.GrantedAt:
		return ReasonSeenBehind
	case r.SeenPosition > s.Position:
		return ReasonSeenAhead
	}
	return ""
}

// FuzzPlanLease: grant, renew, revoke, handoff and sweep with any holder,
// epoch, term, reason and store time either succeed with a plan that audits
// clean, exports and re-reads byte for byte and moves the lease as the op
// says; or are refused with lease.ErrInvalid or a *RefusedError for the op
// (never a panic, never a plan the fold refuses). Whether they succeed is
// stated here independently of the planner.
func FuzzPlanLease(f *testing.F) {
	for op := range uint8(5) {
		f.Add(uint8(0), op, int64(4000), "node-a", "node-b", int64(2), int64(30*time.Second), "operator")
		f.Add(uint8(2), op, int64(40000), "home", "home", int64(1), int64(time.Millisecond-1), "expiry")
	}
	f.Add(uint8(1), uint8(0), int64(4000), "node-b", "", int64(2), int64(24*time.Hour), "")
	f.Add(uint8(2), uint8(3), int64(1000), "home", "a b", int64(1), int64(-1), "\xff\xfe")
	f.Fuzz(func(t *testing.T, variant, op uint8, ms int64, holder, other string, epoch, term int64, reason string) {
		base := fuzzBase(t, variant)
		s := Audit(base).Final
		now := fuzzStoreNow(s, ms)
		storeNow := StoreNow(s, now)
		d := time.Duration(term)
		termOK := d > 0 && d <= MaxTerm
		live := s.Holder != "" && storeNow.Before(s.ExpiresAt)

		var (
			p    Plan
			err  error
			want bool // the op should succeed
			name string
		)
		switch op % 5 {
		case 0:
			name = "grant"
			p, err = PlanGrant(s, now, holder, epoch, d)
			want = idRule(holder) && termOK && epoch == s.Epoch && s.Holder == ""
		case 1:
			name = "renew"
			p, err = PlanRenew(s, now, holder, epoch, d)
			want = termOK && epoch == s.Epoch && holder == s.Holder && live
		case 2:
			name = "revoke"
			p, err = PlanRevoke(s, now, epoch, reason)
			want = reason != "" && reason != ReasonExpiry && len(reason) <= MaxKeyBytes && epoch == s.Epoch && s.Holder != ""
		case 3:
			name = "handoff"
			p, err = PlanHandoff(s, now, other, holder, epoch, d)
			want = idRule(holder) && holder != other && termOK && epoch == s.Epoch && other == s.Holder && live
		case 4:
			name = "sweep"
			var ok bool
			p, ok = PlanSweep(s, now, holder, d)
			want = s.Holder != "" && !storeNow.Before(s.ExpiresAt) && termOK && idRule(holder)
			require.Equal(t, want, ok)
			if !ok {
				require.True(t, p.Empty())
				return
			}
		}
		require.Equal(t, want, err == nil, "%s: %v", name, err)
		if err != nil {
			var re *RefusedError
			if errors.As(err, &re) {
				require.Equal(t, name, re.Op)
				require.Contains(t, []error{lease.ErrFenced, lease.ErrNotHolder, lease.ErrLeaseExpired, lease.ErrLeaseHeld},
					re.Reason.Sentinel(), "%s refused for %s", name, re.Reason)
			} else {
				var ie *InputError
				require.True(t, errors.As(err, &ie), "%s: neither refused nor invalid: %v", name, err)
				require.ErrorIs(t, err, lease.ErrInvalid)
			}
			return
		}

		a := p.After
		require.Equal(t, s.Position+int64(len(p.Entries)), a.Position)
		require.True(t, !a.LastTime.Before(s.LastTime), "store time went back")
		ms64 := (d + time.Millisecond - 1) / time.Millisecond * time.Millisecond // term_ms rounds up
		switch op % 5 {
		case 0, 4:
			require.Equal(t, s.Epoch+1, a.Epoch)
			require.Equal(t, holder, a.Holder)
			require.Equal(t, a.Position, a.GrantedAt)
			require.True(t, a.ExpiresAt.Equal(storeNow.Add(ms64)))
		case 1:
			require.Equal(t, [2]any{s.Epoch, s.Holder}, [2]any{a.Epoch, a.Holder})
			require.True(t, a.ExpiresAt.Equal(storeNow.Add(ms64)))
			require.True(t, !a.ExpiresAt.Before(storeNow.Add(d)), "a renewal never shortens the asked term")
		case 2:
			require.Equal(t, s.Epoch, a.Epoch)
			require.False(t, a.Held())
		case 3:
			require.Equal(t, [3]any{s.Epoch + 1, holder, a.Position}, [3]any{a.Epoch, a.Holder, a.GrantedAt})
		}
		requireSound(t, append(slices.Clone(base), p.Entries...), p.After)
	})
}
