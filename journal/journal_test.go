package journal

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/lease"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// commit applies a plan to an in-memory journal, as a driver would.
func commit(t *testing.T, entries *[]Entry, p Plan) State {
	t.Helper()
	*entries = append(*entries, p.Entries...)
	rep := Audit(*entries)
	require.True(t, rep.OK(), "audit: %v", rep.Violation)
	require.True(t, rep.Final.Equal(p.After), "fold %s != plan %s", rep.Final, p.After)
	return p.After
}

func TestCanonicalEncodingIsFixed(t *testing.T) {
	t.Parallel()
	e := Entry{World: "w1", Position: 1, Epoch: 1, Kind: KindGranted, Holder: "home",
		Payload: []byte(`{"holder":"home","epoch":1,"term_ms":30000,"granted_at_position":1}`), StoreTime: t0}
	// Golden value, computed independently (Python: sha256 over the documented
	// layout). Changing the canonical encoding breaks every existing
	// chain, so this hash may never change.
	require.Equal(t, "11a5ed1a935102e3a3e79cd0aaa8c3e7002b24affb1a6825aec0becadd69cdae", hex.EncodeToString(ComputeHash(&e)))
	e.Signature = []byte("sig")
	require.Equal(t, "11a5ed1a935102e3a3e79cd0aaa8c3e7002b24affb1a6825aec0becadd69cdae", hex.EncodeToString(ComputeHash(&e)), "signature is not covered by the hash")
}

func TestLeaseLifecycleFoldsLikeThePlans(t *testing.T) {
	t.Parallel()
	var j []Entry
	p, err := PlanCreate("w1", "home", 30*time.Second, t0)
	require.NoError(t, err)
	s := commit(t, &j, p)
	require.Equal(t, int64(1), s.Epoch)
	require.Equal(t, "home", s.Holder)

	p, err = PlanHandoff(s, t0.Add(time.Second), "home", "node-a", 1, 30*time.Second)
	require.NoError(t, err)
	s = commit(t, &j, p)
	require.Equal(t, int64(2), s.Epoch)
	require.Equal(t, int64(2), s.GrantedAt)

	p, err = PlanRenew(s, t0.Add(2*time.Second), "node-a", 2, 30*time.Second)
	require.NoError(t, err)
	s = commit(t, &j, p)
	require.Equal(t, t0.Add(32*time.Second), s.ExpiresAt)

	// Sweep does nothing before expiry, then revokes and grants home epoch+1.
	_, ok := PlanSweep(s, t0.Add(31*time.Second), "home", 30*time.Second)
	require.False(t, ok)
	p, ok = PlanSweep(s, t0.Add(32*time.Second), "home", 30*time.Second)
	require.True(t, ok)
	require.Len(t, p.Entries, 2)
	require.Equal(t, KindRevoked, p.Entries[0].Kind)
	require.Equal(t, KindGranted, p.Entries[1].Kind)
	s = commit(t, &j, p)
	require.Equal(t, int64(3), s.Epoch)
	require.Equal(t, "home", s.Holder)

	p, err = PlanRevoke(s, t0.Add(33*time.Second), 3, "operator")
	require.NoError(t, err)
	s = commit(t, &j, p)
	require.False(t, s.Held())

	_, err = PlanGrant(s, t0.Add(34*time.Second), "node-b", 2, 30*time.Second)
	require.ErrorIs(t, err, lease.ErrFenced)
	p, err = PlanGrant(s, t0.Add(34*time.Second), "node-b", 3, 30*time.Second)
	require.NoError(t, err)
	s = commit(t, &j, p)
	_, err = PlanGrant(s, t0.Add(35*time.Second), "node-c", 4, 30*time.Second)
	require.ErrorIs(t, err, lease.ErrLeaseHeld)

	rep := Audit(j)
	require.True(t, rep.OK())
	require.Equal(t, []Span{{1, "home", 1, 1}, {2, "node-a", 2, 3}, {2, "", 4, 4}, {3, "home", 5, 5}, {3, "", 6, 6}, {4, "node-b", 7, 7}}, rep.Spans)
}

func TestAppendRule(t *testing.T) {
	t.Parallel()
	var j []Entry
	p, _ := PlanCreate("w1", "home", 30*time.Second, t0)
	s := commit(t, &j, p)
	p, _ = PlanHandoff(s, t0, "home", "a", 1, 30*time.Second)
	s = commit(t, &j, p) // epoch 2 held by a, granted at 2

	cases := []struct {
		name   string
		req    AppendRequest
		at     time.Duration
		reason Reason
		err    error
	}{
		{"accepted", AppendRequest{Holder: "a", Epoch: 2, SeenPosition: 2}, 0, "", nil},
		{"stale epoch", AppendRequest{Holder: "home", Epoch: 1, SeenPosition: 2}, 0, ReasonStaleEpoch, lease.ErrFenced},
		{"future epoch", AppendRequest{Holder: "a", Epoch: 3, SeenPosition: 2}, 0, ReasonStaleEpoch, lease.ErrFenced},
		{"wrong holder", AppendRequest{Holder: "b", Epoch: 2, SeenPosition: 2}, 0, ReasonNotHolder, lease.ErrNotHolder},
		{"seen below grant", AppendRequest{Holder: "a", Epoch: 2, SeenPosition: 1}, 0, ReasonSeenBehind, lease.ErrSeenBehind},
		{"expired exactly at expiry", AppendRequest{Holder: "a", Epoch: 2, SeenPosition: 2}, 30 * time.Second, ReasonExpired, lease.ErrLeaseExpired},
		{"live just before expiry", AppendRequest{Holder: "a", Epoch: 2, SeenPosition: 2}, 30*time.Second - time.Microsecond, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.Kind = "note"
			require.NoError(t, ValidateAppend(&c.req))
			require.Equal(t, c.reason, CheckAppend(s, t0.Add(c.at), &c.req))
			p, out := PlanAppend(s, t0.Add(c.at), []AppendRequest{c.req}, func(string) bool { return false })
			if c.err == nil {
				require.NoError(t, out[0].Err)
				require.Equal(t, s.Position+1, out[0].Position)
				return
			}
			require.ErrorIs(t, out[0].Err, c.err)
			var re *RefusedError
			require.True(t, errors.As(out[0].Err, &re))
			if c.reason.Journaled() {
				require.Len(t, p.Entries, 1)
				require.Equal(t, KindRejected, p.Entries[0].Kind)
			} else {
				require.True(t, p.Empty())
			}
		})
	}
}

func TestRejectionsJournaledOncePerHolderPerEpoch(t *testing.T) {
	t.Parallel()
	var j []Entry
	p, _ := PlanCreate("w1", "home", 30*time.Second, t0)
	s := commit(t, &j, p)
	zombie := AppendRequest{Holder: "zombie", Epoch: 1, SeenPosition: 1, Kind: "x", Payload: []byte("null")}
	good := AppendRequest{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "x", Payload: []byte("null")}
	p, out := PlanAppend(s, t0, []AppendRequest{zombie, good, zombie, zombie}, func(string) bool { return false })
	require.Len(t, p.Entries, 2, "one rejection and one data entry")
	require.ErrorIs(t, out[0].Err, lease.ErrNotHolder)
	require.NoError(t, out[1].Err)
	require.Equal(t, []string{"zombie"}, p.Rejected)
	s = commit(t, &j, p)
	p, _ = PlanAppend(s, t0, []AppendRequest{zombie}, func(h string) bool { return h == "zombie" })
	require.True(t, p.Empty())

	// A hand-made second rejection in the same epoch fails the audit.
	b := newBuilder(s, t0)
	b.add(KindRejected, "home", 1, "", mustMarshal(Rejected{Holder: "zombie", Epoch: 1, Reason: ReasonNotHolder}))
	rep := Audit(append(j, b.done().Entries...))
	require.False(t, rep.OK())
	require.Equal(t, "rejection_flood", rep.Violation.Rule)
	require.Equal(t, int64(4), rep.Violation.Position)
}

func TestValidation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		req  AppendRequest
	}{
		{"oversized", AppendRequest{Holder: "a", Epoch: 1, Kind: "x", Payload: []byte(`"` + strings.Repeat("a", MaxPayloadBytes) + `"`)}},
		{"malformed", AppendRequest{Holder: "a", Epoch: 1, Kind: "x", Payload: []byte(`{"a":`)}},
		{"reserved kind", AppendRequest{Holder: "a", Epoch: 1, Kind: KindGranted}},
		{"unknown reserved kind", AppendRequest{Holder: "a", Epoch: 1, Kind: "lease.stolen"}},
		{"bad kind chars", AppendRequest{Holder: "a", Epoch: 1, Kind: "a b"}},
		{"negative seen", AppendRequest{Holder: "a", Epoch: 1, Kind: "x", SeenPosition: -1}},
		{"zero epoch", AppendRequest{Holder: "a", Epoch: 0, Kind: "x"}},
		{"empty holder", AppendRequest{Epoch: 1, Kind: "x"}},
	} {
		err := ValidateAppend(&c.req)
		require.ErrorIs(t, err, lease.ErrInvalid, c.name)
		var ie *InputError
		require.True(t, errors.As(err, &ie), c.name)
	}
	r := AppendRequest{Holder: "a", Epoch: 1, Kind: "x", Payload: []byte(" { \"b\" : [1, 2] } ")}
	require.NoError(t, ValidateAppend(&r))
	require.Equal(t, `{"b":[1,2]}`, string(r.Payload))
}

func sampleJournal(t *testing.T) []Entry {
	var j []Entry
	p, _ := PlanCreate("w1", "home", 30*time.Second, t0)
	s := commit(t, &j, p)
	p, _ = PlanAppend(s, t0.Add(time.Second), []AppendRequest{{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "note", Payload: []byte(`{"msg":"<hi> & é"}`)}}, func(string) bool { return false })
	s = commit(t, &j, p)
	p, _ = PlanHandoff(s, t0.Add(2*time.Second), "home", "a", 1, 30*time.Second)
	commit(t, &j, p)
	return j
}

func TestJSONLRoundTripAndCorruption(t *testing.T) {
	t.Parallel()
	j := sampleJournal(t)
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range j {
		require.NoError(t, w.Write(&j[i]))
	}
	require.NoError(t, w.Close())
	readAll := func(b []byte) ([]Entry, error) {
		r := NewReader(bytes.NewReader(b))
		var out []Entry
		for {
			e, err := r.Next()
			if err == io.EOF {
				return out, nil
			}
			if err != nil {
				return out, err
			}
			out = append(out, *e)
		}
	}
	got, err := readAll(buf.Bytes())
	require.NoError(t, err)
	require.True(t, Audit(got).OK())

	// One changed byte inside a payload: the line parses, the hash fails.
	b := bytes.Replace(buf.Bytes(), []byte(`"msg"`), []byte(`"msh"`), 1)
	got, err = readAll(b)
	require.NoError(t, err)
	rep := Audit(got)
	require.False(t, rep.OK())
	require.Equal(t, int64(2), rep.Violation.Position)
	require.Equal(t, "hash", rep.Violation.Rule)

	// A torn tail is reported with its line number: cut mid-line (here,
	// inside the end record, line 4)…
	_, err = readAll(buf.Bytes()[:buf.Len()-5])
	var le *LineError
	require.True(t, errors.As(err, &le))
	require.Equal(t, 4, le.Line)
	require.ErrorIs(t, err, lease.ErrCorrupt)
	// …and cut exactly at a line boundary, where every line left parses:
	// without the end record, after the last entry or earlier, and empty.
	lines := bytes.SplitAfter(buf.Bytes(), []byte("\n"))
	for keep := 0; keep < len(lines)-1; keep++ {
		_, err = readAll(bytes.Join(lines[:keep], nil))
		require.ErrorIs(t, err, ErrTornTail, "first %d lines", keep)
		require.ErrorIs(t, err, lease.ErrCorrupt)
		require.True(t, errors.As(err, &le))
		require.Equal(t, keep+1, le.Line)
	}
	// An end record that does not match what precedes it: an entry
	// dropped from the middle, or the whole tail of entries with the end
	// record kept.
	_, err = readAll(bytes.Join([][]byte{lines[0], lines[2], lines[3]}, nil))
	require.Error(t, err)
	_, err = readAll(bytes.Join([][]byte{lines[0], lines[3]}, nil))
	require.ErrorIs(t, err, ErrTornTail)
	// Nothing may follow the end record.
	_, err = readAll(append(bytes.Clone(buf.Bytes()), lines[0]...))
	require.ErrorContains(t, err, "data after the end record")

	// An unknown field is refused.
	b = bytes.Replace(buf.Bytes(), []byte(`"key":""`), []byte(`"key":"","extra":1`), 1)
	_, err = readAll(b)
	require.True(t, errors.As(err, &le))
	require.Equal(t, 1, le.Line)
}

// TestJSONLAnyChangedByteIsDetected flips every byte of an export, one at a
// time, and requires each changed file to fail: as a torn or malformed line,
// or as an audit violation.
func TestJSONLAnyChangedByteIsDetected(t *testing.T) {
	t.Parallel()
	j := sampleJournal(t)
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range j {
		require.NoError(t, w.Write(&j[i]))
	}
	require.NoError(t, w.Close())
	orig := buf.Bytes()
	for off := range orig {
		for _, delta := range []byte{1, 0x20} {
			b := bytes.Clone(orig)
			b[off] ^= delta
			r := NewReader(bytes.NewReader(b))
			a := NewAuditor()
			detected := false
			for {
				e, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil || a.Add(e) != nil {
					detected = true
					break
				}
			}
			require.True(t, detected, "byte %d (%q) xor %#x went unnoticed", off, orig[off], delta)
		}
	}
}
