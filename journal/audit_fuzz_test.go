package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/lease"
)

// fuzzSeedJSONL exports a journal that uses every kind: a grant, data
// entries, a rejection, a handoff, a renewal, an operator revoke, a new
// grant, and an expiry sweep (revoke then grant).
func fuzzSeedJSONL(t testing.TB) []byte {
	var j []Entry
	apply := func(p Plan, err error) State {
		require.NoError(t, err)
		j = append(j, p.Entries...)
		return p.After
	}
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	never := func(string) bool { return false }
	s := apply(PlanCreate("w1", "home", 30*time.Second, at(0)))
	p, _ := PlanAppend(s, at(1), []AppendRequest{
		{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "note", Key: "k1", Payload: []byte(`{"msg":"<hi> & é"}`)},
		{Holder: "zombie", Epoch: 1, SeenPosition: 1, Kind: "note", Payload: []byte(`1`)},
	}, never)
	s = apply(p, nil)
	s = apply(PlanHandoff(s, at(2), "home", "node-a", 1, 30*time.Second))
	s = apply(PlanRenew(s, at(3), "node-a", 2, 20*time.Second))
	s = apply(PlanRevoke(s, at(4), 2, "operator"))
	s = apply(PlanGrant(s, at(5), "node-b", 2, 10*time.Second))
	p, _ = PlanAppend(s, at(6), []AppendRequest{{Holder: "node-b", Epoch: 3, SeenPosition: 7, Kind: "note", Payload: []byte(`[true]`)}}, never)
	s = apply(p, nil)
	p, ok := PlanSweep(s, at(20), "home", 30*time.Second)
	require.True(t, ok)
	apply(p, nil)

	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range j {
		require.NoError(t, w.Write(&j[i]))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// readEntries reads entries until the end or the first line the reader
// refuses (FuzzJSONLReader covers refusals).
func readEntries(data []byte) []Entry {
	r := NewReader(bytes.NewReader(data))
	var out []Entry
	for {
		e, err := r.Next()
		if err != nil {
			return out
		}
		out = append(out, *e)
	}
}

// reseal re-links and re-hashes entries, so a fuzzed field change reaches
// the lease fold instead of stopping at the hash check.
func reseal(entries []Entry) {
	var prev []byte
	for i := range entries {
		entries[i].PrevHash = prev
		Seal(&entries[i])
		prev = entries[i].Hash
	}
}

// FuzzAudit feeds the auditor journals read from fuzzed JSONL, re-hashed
// when reseal is set so that edits to epochs, holders, kinds, payloads and
// store times reach the lease rules. The audit is deterministic, stops at
// the first bad entry (an ErrCorrupt *Violation naming its position), and
// every entry it accepts obeys SPEC §4 as stated here: positions 1, 2, 3…
// chained by hash in one world with non-decreasing store times; the epoch
// moves only by a grant (to nobody's lease) or a live holder's handoff,
// each by exactly one and to a term in (0, MaxTerm]; renewals and data
// entries only by the live holder of the current epoch; at most one
// append.rejected per holder per epoch. Its spans name, for every
// position, the epoch and holder that held the lease.
func FuzzAudit(f *testing.F) {
	seed := fuzzSeedJSONL(f)
	f.Add(seed, true)
	f.Add(seed, false)
	lines := bytes.SplitAfter(seed, []byte("\n"))
	f.Add(bytes.Join(lines[:3], nil), true)
	f.Fuzz(func(t *testing.T, data []byte, resealed bool) {
		entries := readEntries(data)
		if resealed {
			reseal(entries)
		}
		rep := Audit(entries)
		require.Equal(t, rep, Audit(entries), "the audit is deterministic")
		require.Equal(t, rep.Violation == nil, rep.Entries == int64(len(entries)))
		if v := rep.Violation; v != nil {
			require.ErrorIs(t, v, lease.ErrCorrupt)
			require.Equal(t, entries[rep.Entries].Position, v.Position, "the violation names the refused entry")
			a := NewAuditor()
			for i := range entries[:rep.Entries+1] {
				_ = a.Add(&entries[i])
			}
			require.Equal(t, v, a.Add(&entries[0]), "after a violation the auditor only repeats it")
		}

		accepted := entries[:rep.Entries]
		held := make([][2]any, 0, len(accepted)) // epoch and holder in force at each position
		rejected := map[string]bool{}
		var s State
		for i := range accepted {
			e := &accepted[i]
			require.Equal(t, int64(i+1), e.Position)
			require.True(t, HashValid(e))
			if i > 0 {
				require.Equal(t, accepted[i-1].Hash, e.PrevHash)
				require.Equal(t, accepted[0].World, e.World)
				require.False(t, e.StoreTime.Before(accepted[i-1].StoreTime), "store time went back")
			} else {
				require.Empty(t, e.PrevHash)
			}
			n, err := Fold(s, e)
			require.NoError(t, err)
			live := s.Holder != "" && e.StoreTime.Before(s.ExpiresAt)
			same := s.Epoch == n.Epoch && s.Holder == n.Holder && s.ExpiresAt.Equal(n.ExpiresAt) && s.GrantedAt == n.GrantedAt
			switch e.Kind {
			case KindGranted, KindHandedOff:
				require.Equal(t, s.Epoch+1, n.Epoch)
				require.Equal(t, e.Position, n.GrantedAt)
				require.NotEmpty(t, n.Holder)
				require.True(t, n.Term > 0 && n.Term <= MaxTerm, "term %s", n.Term)
				require.True(t, n.ExpiresAt.Equal(e.StoreTime.Add(n.Term)))
				if e.Kind == KindGranted {
					require.Empty(t, s.Holder, "granted while held")
				} else {
					require.True(t, live, "handed off by a holder whose lease was not live")
					require.NotEqual(t, s.Holder, n.Holder)
				}
			case KindRenewed:
				require.True(t, live && e.Holder == s.Holder, "renewed by %q, not the live holder (%s)", e.Holder, s)
				require.Equal(t, [3]any{s.Epoch, s.Holder, s.GrantedAt}, [3]any{n.Epoch, n.Holder, n.GrantedAt})
				require.True(t, n.Term > 0 && n.Term <= MaxTerm)
			case KindRevoked:
				require.NotEmpty(t, s.Holder, "revoked nobody's lease")
				require.Empty(t, n.Holder)
				require.Equal(t, s.Epoch, n.Epoch)
			case KindRejected:
				require.True(t, same, "append.rejected changed the lease")
				var p Rejected
				require.NoError(t, decodeStrict(e.Payload, &p))
				key := fmt.Sprintf("%d/%s", n.Epoch, p.Holder)
				require.False(t, rejected[key], "second append.rejected of %q in epoch %d", p.Holder, n.Epoch)
				rejected[key] = true
			default:
				require.False(t, e.Kind.IsSystem())
				require.True(t, live && e.Holder == s.Holder && e.Epoch == s.Epoch,
					"data entry by %q under epoch %d accepted, lease was %s", e.Holder, e.Epoch, s)
				require.True(t, same, "a data entry changed the lease")
			}
			require.Equal(t, [2]any{e.Epoch, e.Holder}, [2]any{n.Epoch, n.Holder})
			s = n
			held = append(held, [2]any{s.Epoch, s.Holder})
		}
		require.True(t, s.Equal(rep.Final), "report %s, refold %s", rep.Final, s)

		next := int64(1)
		for i, sp := range rep.Spans {
			require.Equal(t, next, sp.From, "spans leave a gap or overlap")
			require.LessOrEqual(t, sp.From, sp.To)
			if i > 0 {
				prev := rep.Spans[i-1]
				require.LessOrEqual(t, prev.Epoch, sp.Epoch)
				require.False(t, prev.Epoch == sp.Epoch && prev.Holder == sp.Holder, "adjacent spans not merged")
			}
			for pos := sp.From; pos <= sp.To; pos++ {
				require.Equal(t, held[pos-1], [2]any{sp.Epoch, sp.Holder}, "position %d", pos)
			}
			next = sp.To + 1
		}
		require.Equal(t, rep.Final.Position+1, next)

		// What was read (and resealed) exports and reads back unchanged.
		var buf bytes.Buffer
		w := NewWriter(&buf)
		for i := range entries {
			require.NoError(t, w.Write(&entries[i]))
		}
		require.NoError(t, w.Close())
		r := NewReader(&buf)
		for i := range entries {
			e, err := r.Next()
			require.NoError(t, err)
			require.Equal(t, Canonical(&entries[i]), Canonical(e))
			require.Equal(t, entries[i].Hash, e.Hash)
		}
		_, err := r.Next()
		require.True(t, errors.Is(err, io.EOF))
	})
}
