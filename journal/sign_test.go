package journal

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/lease"
)

// signedWorld creates world w granted to "n1", whose registered key is
// pub, and returns the journal and its head.
func signedWorld(t *testing.T, pub ed25519.PublicKey) ([]Entry, State) {
	t.Helper()
	p, err := PlanCreate("w", "n1", 30*time.Second, t0)
	require.NoError(t, err)
	require.NoError(t, BindKeys(&p, func(h string) ([]byte, error) {
		if h == "n1" {
			return pub, nil
		}
		return nil, nil
	}))
	var es []Entry
	s := commit(t, &es, p)
	require.Equal(t, []byte(pub), s.HolderKey, "the grant carries the holder's key")
	return es, s
}

// signedBatch is n requests from n1 under epoch 1 for positions from,
// signed with priv over the world's payloads.
func signedBatch(priv ed25519.PrivateKey, from int64, keys ...string) []AppendRequest {
	reqs := make([]AppendRequest, len(keys))
	es := make([]Entry, len(keys))
	for i, k := range keys {
		reqs[i] = AppendRequest{Holder: "n1", Epoch: 1, SeenPosition: 1, Kind: "turn", Key: k,
			Payload: []byte(`{"k":"` + k + `"}`), Position: from + int64(i)}
		es[i] = Entry{World: "w", Position: from + int64(i), Epoch: 1, Kind: "turn", Holder: "n1", Key: k, Payload: reqs[i].Payload}
	}
	reqs[len(reqs)-1].Signature = SignBatch(priv, es)
	return reqs
}

func never(string) bool { return false }

func TestSignedBatchesAppendAndAudit(t *testing.T) {
	t.Parallel()
	pub, priv, _ := ed25519.GenerateKey(nil)
	es, s := signedWorld(t, pub)
	now := t0.Add(time.Second)
	p, out := PlanAppendKeyed(s, now, signedBatch(priv, 2, "a", "b", "c"), never, nil)
	for i, o := range out {
		require.NoError(t, o.Err)
		require.Equal(t, int64(2+i), o.Position)
	}
	s = commit(t, &es, p)
	require.Empty(t, es[1].Signature, "only the batch's last entry carries the signature")
	require.Len(t, es[3].Signature, SignatureSize)
	p, out = PlanAppendKeyed(s, now, signedBatch(priv, 5, "d"), never, nil)
	require.NoError(t, out[0].Err)
	commit(t, &es, p)
	rep := Audit(es)
	require.Equal(t, int64(2), rep.Signatures)
	require.Equal(t, int64(4), rep.Signed)

	// Every way of breaking a signature is found at its position by the audit.
	tamper := func(f func([]Entry)) Violation {
		c := append([]Entry(nil), es...)
		for i := range c {
			c[i].Payload = append([]byte(nil), c[i].Payload...)
		}
		f(c)
		for i := 1; i < len(c); i++ { // re-seal: the attacker can rewrite hashes, not signatures
			c[i].PrevHash = c[i-1].Hash
			Seal(&c[i])
		}
		rep := Audit(c)
		require.False(t, rep.OK())
		return *rep.Violation
	}
	v := tamper(func(c []Entry) { c[2].Payload = []byte(`{"k":"x"}`) })
	require.Equal(t, "signature", v.Rule)
	require.Equal(t, int64(4), v.Position, "the signed entry that covers the forged one")
	v = tamper(func(c []Entry) { c[3].Signature = nil })
	require.Equal(t, "signature", v.Rule, "two batches merged: the second's signature covers only itself")
	require.Equal(t, int64(5), v.Position)
	v = tamper(func(c []Entry) { c[4].Signature = nil })
	require.Equal(t, "unsigned", v.Rule, "a journal ending inside a batch")
	v = tamper(func(c []Entry) { c[4].Signature = c[3].Signature })
	require.Equal(t, "signature", v.Rule, "a signature replayed at another position")
	v = tamper(func(c []Entry) { c[0].Signature = c[3].Signature })
	require.Equal(t, "signature", v.Rule, "a grant carries no signature")
}

func TestSignedBatchRefusals(t *testing.T) {
	t.Parallel()
	pub, priv, _ := ed25519.GenerateKey(nil)
	_, forger, _ := ed25519.GenerateKey(nil)
	es, s := signedWorld(t, pub)
	now := t0.Add(time.Second)
	refused := func(p Plan, out []AppendOutcome, reason Reason, sentinel error) {
		t.Helper()
		for _, o := range out {
			var re *RefusedError
			require.True(t, errors.As(o.Err, &re), "%v", o.Err)
			require.Equal(t, reason, re.Reason)
			require.ErrorIs(t, o.Err, sentinel)
		}
	}

	// A forged batch (signed with another key): refused, journaled once.
	p, out := PlanAppendKeyed(s, now, signedBatch(forger, 2, "a", "b"), never, nil)
	refused(p, out, ReasonBadSignature, lease.ErrBadSignature)
	require.Len(t, p.Entries, 1)
	require.Equal(t, KindRejected, p.Entries[0].Kind)
	s = commit(t, &es, p)
	p, out = PlanAppendKeyed(s, now, signedBatch(forger, 3, "a"), func(string) bool { return true }, nil)
	refused(p, out, ReasonBadSignature, lease.ErrBadSignature)
	require.True(t, p.Empty(), "at most one append.rejected per holder per epoch")

	// An unsigned append from a holder whose grant carries a key.
	p, out = PlanAppendKeyed(s, now, []AppendRequest{{Holder: "n1", Epoch: 1, SeenPosition: 1, Kind: "turn", Payload: []byte(`{}`)}}, func(string) bool { return true }, nil)
	refused(p, out, ReasonBadSignature, lease.ErrBadSignature)

	// A good batch signed for positions that are taken: moved, nothing journaled.
	p, out = PlanAppendKeyed(s, now, signedBatch(priv, 2, "a"), never, nil)
	refused(p, out, ReasonMoved, lease.ErrConflict)
	require.True(t, p.Empty())

	// A replayed batch renumbered to the head: the signature no longer verifies.
	good := signedBatch(priv, 3, "a", "b")
	p, out = PlanAppendKeyed(s, now, good, never, nil)
	require.NoError(t, out[1].Err)
	s = commit(t, &es, p)
	replay := append([]AppendRequest(nil), good...)
	for i := range replay {
		replay[i].Position += 2
	}
	p, out = PlanAppendKeyed(s, now, replay, func(string) bool { return true }, nil)
	require.ErrorIs(t, out[0].Err, lease.ErrBadSignature, "a signed batch replayed at other positions")
	require.True(t, p.Empty(), "journaled once already")

	// A key already appended: answered with its position, the rest moved.
	appended := func(k string) (int64, bool) {
		if k == "a" {
			return 3, true
		}
		return 0, false
	}
	p, out = PlanAppendKeyed(s, now, signedBatch(priv, 5, "a", "z"), never, appended)
	require.NoError(t, out[0].Err)
	require.Equal(t, int64(3), out[0].Position)
	require.ErrorIs(t, out[1].Err, lease.ErrConflict)
	require.True(t, p.Empty())

	// Malformed batches are input errors.
	bad := signedBatch(priv, 5, "x", "y")
	bad[0].Signature = bad[1].Signature
	_, out = PlanAppendKeyed(s, now, bad, never, nil)
	require.ErrorIs(t, out[0].Err, lease.ErrInvalid)
	bad = signedBatch(priv, 5, "x", "y")
	bad[1].Position = 9
	_, out = PlanAppendKeyed(s, now, bad, never, nil)
	require.ErrorIs(t, out[1].Err, lease.ErrInvalid)
}

func TestUnkeyedEpochsStayUnsigned(t *testing.T) {
	t.Parallel()
	_, priv, _ := ed25519.GenerateKey(nil)
	p, err := PlanCreate("w", "n1", 30*time.Second, t0)
	require.NoError(t, err)
	var es []Entry
	s := commit(t, &es, p)
	require.Nil(t, s.HolderKey)
	p, out := PlanAppendKeyed(s, t0, []AppendRequest{{Holder: "n1", Epoch: 1, SeenPosition: 1, Kind: "turn", Payload: []byte(`{}`)}}, never, nil)
	require.NoError(t, out[0].Err)
	s = commit(t, &es, p)
	p, out = PlanAppendKeyed(s, t0, signedBatch(priv, 3, "a"), never, nil)
	require.ErrorIs(t, out[0].Err, lease.ErrBadSignature, "a signature where the grant carries no key")
	commit(t, &es, p)
}

func TestBindKeysOnHandoff(t *testing.T) {
	t.Parallel()
	pub1, _, _ := ed25519.GenerateKey(nil)
	pub2, priv2, _ := ed25519.GenerateKey(nil)
	es, s := signedWorld(t, pub1)
	p, err := PlanHandoff(s, t0, "n1", "n2", 1, 30*time.Second)
	require.NoError(t, err)
	require.NoError(t, BindKeys(&p, func(h string) ([]byte, error) { return map[string][]byte{"n2": pub2}[h], nil }))
	s = commit(t, &es, p)
	require.Equal(t, []byte(pub2), s.HolderKey)
	reqs := []AppendRequest{{Holder: "n2", Epoch: 2, SeenPosition: 2, Kind: "turn", Payload: []byte(`{}`), Position: 3}}
	reqs[0].Signature = SignBatch(priv2, []Entry{{World: "w", Position: 3, Epoch: 2, Kind: "turn", Holder: "n2", Payload: []byte(`{}`)}})
	p, out := PlanAppendKeyed(s, t0, reqs, never, nil)
	require.NoError(t, out[0].Err)
	commit(t, &es, p)
	_, err = DecodeKey(hex.EncodeToString(pub2[:31]))
	require.Error(t, err)
}

// FuzzHashesMatchTheirEncodings holds the pooled, streamed hashing to the
// encodings it hashes: ComputeHash is SHA-256 of Canonical, and a batch's
// digest chains SHA-256 over the previous digest and SignedBody.
func FuzzHashesMatchTheirEncodings(f *testing.F) {
	f.Add("w", int64(1), int64(1), "k", "h", "key", []byte(`{"a":1}`), []byte{})
	f.Add("world-é", int64(9), int64(3), "host.turn", "node-1", "", []byte(strings.Repeat("x", 3000)), bytes.Repeat([]byte{7}, 32))
	f.Fuzz(func(t *testing.T, world string, pos, epoch int64, kind, holder, key string, payload, prev []byte) {
		e := Entry{World: world, Position: pos, Epoch: epoch, Kind: Kind(kind), Holder: holder, Key: key,
			Payload: payload, PrevHash: prev, StoreTime: time.UnixMicro(pos * 7)}
		want := sha256.Sum256(Canonical(&e))
		if got := ComputeHash(&e); !bytes.Equal(got, want[:]) {
			t.Fatalf("ComputeHash = %x, SHA-256(Canonical) = %x", got, want)
		}
		h := sha256.New()
		h.Write(signStart)
		h.Write(SignedBody(&e))
		d1 := h.Sum(nil)
		h = sha256.New()
		h.Write(d1)
		h.Write(SignedBody(&e))
		if got := BatchDigest([]Entry{e, e}); !bytes.Equal(got, h.Sum(nil)) {
			t.Fatalf("BatchDigest differs from the chained SHA-256 over SignedBody")
		}
	})
}
