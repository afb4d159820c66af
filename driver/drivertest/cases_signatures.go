package drivertest

import (
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// Node keys and signatures (issue 11, journal/sign.go): a node registers
// its key; a grant or handoff to it carries the key; from then on the
// epoch's appends must come as batches signed with it. Forged, replayed
// and unsigned appends are refused (bad_signature, journaled once per
// holder per epoch), a batch signed for positions that moved is refused
// without a trace (moved), and the journal audits with every signature.

func init() {
	worldCases = append(worldCases, signatureCases...)
}

// seeded is a fixed key, so both stores write byte-identical journals.
func seeded(b byte) (ed25519.PublicKey, ed25519.PrivateKey) {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = b
	}
	priv := ed25519.NewKeyFromSeed(seed)
	return priv.Public().(ed25519.PublicKey), priv
}

func (e *env) register(node string, pub []byte) *driver.NodeKey {
	e.t.Helper()
	k, err := e.d.NodeKeyRegister(e.ctx, &driver.NodeKeyRegisterParams{Node: node, PublicKey: pub})
	require.NoError(e.t, err)
	return k
}

// signed builds a batch of turns by holder under epoch for the positions
// from, signed with priv.
func signed(world, holder string, epoch, seen, from int64, priv ed25519.PrivateKey, keys ...string) []journal.AppendRequest {
	reqs := make([]journal.AppendRequest, len(keys))
	es := make([]journal.Entry, len(keys))
	for i, k := range keys {
		reqs[i] = journal.AppendRequest{Holder: holder, Epoch: epoch, SeenPosition: seen, Kind: "turn", Key: k,
			Payload: []byte(`{"k":"` + k + `"}`), Position: from + int64(i)}
		es[i] = journal.Entry{World: world, Position: from + int64(i), Epoch: epoch, Kind: "turn", Holder: holder,
			Key: k, Payload: reqs[i].Payload}
	}
	reqs[len(reqs)-1].Signature = journal.SignBatch(priv, es)
	return reqs
}

func (e *env) appendBatch(world string, reqs []journal.AppendRequest) []journal.AppendOutcome {
	e.t.Helper()
	out, err := e.d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: world, Requests: reqs})
	require.NoError(e.t, err)
	require.Len(e.t, out, len(reqs))
	return out
}

func requireRefused(t *testing.T, out []journal.AppendOutcome, reason journal.Reason, sentinel error) {
	t.Helper()
	for _, o := range out {
		var re *journal.RefusedError
		require.True(t, errors.As(o.Err, &re), "want %s, got %v", reason, o.Err)
		require.Equal(t, reason, re.Reason)
		require.ErrorIs(t, o.Err, sentinel)
	}
}

var signatureCases = []Case{
	{"NodeKeyRegisterVersionsAndGet", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		a, _ := seeded(1)
		b, _ := seeded(2)
		_, err := e.d.NodeKeyGet(e.ctx, &driver.NodeKeyGetParams{Node: "n1"})
		require.ErrorIs(t, err, lease.ErrNotFound)
		k := e.register("n1", a)
		require.Equal(t, int64(1), k.Version)
		require.Equal(t, StartTime, k.RegisteredAt)
		require.Equal(t, int64(1), e.register("n1", a).Version, "the same key again is the same version")
		e.h.Clock.Advance(time.Second)
		require.Equal(t, int64(2), e.register("n1", b).Version)
		got, err := e.d.NodeKeyGet(e.ctx, &driver.NodeKeyGetParams{Node: "n1"})
		require.NoError(t, err)
		require.Equal(t, driver.NodeKey{Node: "n1", Version: 2, PublicKey: b, RegisteredAt: StartTime.Add(time.Second)}, *got)
		before, err := e.fingerprint()
		require.NoError(t, err)
		for _, p := range []*driver.NodeKeyRegisterParams{{Node: "n1", PublicKey: a[:31]}, {Node: "", PublicKey: a}, {Node: "n1"}} {
			_, err := e.d.NodeKeyRegister(e.ctx, p)
			require.ErrorIs(t, err, lease.ErrInvalid)
		}
		after, err := e.fingerprint()
		require.NoError(t, err)
		require.Equal(t, before, after, "a refused registration writes nothing")
	}},
	{"SignedAppendsAcceptedAndAudited", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		pub, priv := seeded(1)
		e.register("n1", pub)
		w := e.create("w", "n1")
		require.Equal(t, []byte(pub), w.HolderKey, "the grant carries the holder's key")
		require.Equal(t, []byte(pub), e.get("w").HolderKey)
		out := e.appendBatch("w", signed("w", "n1", 1, 1, 2, priv, "a", "b", "c"))
		for i, o := range out {
			require.NoError(t, o.Err)
			require.Equal(t, int64(2+i), o.Position)
		}
		out = e.appendBatch("w", signed("w", "n1", 1, 4, 5, priv, "d"))
		require.Equal(t, int64(5), out[0].Position)
		es := e.read("w")
		require.Len(t, es, 5)
		require.Contains(t, string(es[0].Payload), `"key":"`+journal.EncodeKey(pub)+`"`)
		require.Empty(t, es[1].Signature)
		require.Empty(t, es[2].Signature)
		require.Len(t, es[3].Signature, journal.SignatureSize, "the batch's last entry carries its signature")
		require.Len(t, es[4].Signature, journal.SignatureSize)
		rep := e.audit("w")
		require.True(t, rep.OK(), "%v", rep.Violation)
		require.Equal(t, []byte(pub), rep.Final.HolderKey)
	}},
	{"ForgedReplayedUnsignedAndMovedAppendsRefused", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		pub, priv := seeded(1)
		_, forger := seeded(9)
		e.register("n1", pub)
		e.create("w", "n1")
		e.appendBatch("w", signed("w", "n1", 1, 1, 2, priv, "a", "b"))
		before, err := e.fingerprint()
		require.NoError(t, err)

		// A batch signed for positions already written: moved, nothing written.
		requireRefused(t, e.appendBatch("w", signed("w", "n1", 1, 3, 2, priv, "x")), journal.ReasonMoved, lease.ErrConflict)
		// A key already in the journal: answered, the rest of the batch moved.
		out := e.appendBatch("w", signed("w", "n1", 1, 3, 4, priv, "y", "a"))
		require.ErrorIs(t, out[0].Err, lease.ErrConflict)
		require.NoError(t, out[1].Err)
		require.Equal(t, int64(2), out[1].Position)
		after, err := e.fingerprint()
		require.NoError(t, err)
		require.Equal(t, before, after, "moved batches write nothing")

		// Forged (another key): refused, one append.rejected.
		requireRefused(t, e.appendBatch("w", signed("w", "n1", 1, 3, 4, forger, "f")), journal.ReasonBadSignature, lease.ErrBadSignature)
		require.Equal(t, int64(4), e.get("w").Position)
		// A signed batch replayed at the head: its signature covers other positions.
		replay := signed("w", "n1", 1, 1, 2, priv, "a2", "b2")
		replay[0].Position, replay[1].Position = 5, 6
		requireRefused(t, e.appendBatch("w", replay), journal.ReasonBadSignature, lease.ErrBadSignature)
		// Unsigned, from the holder whose grant carries a key.
		_, err = e.append1("w", "n1", 1, 4, "turn", `{}`)
		require.ErrorIs(t, err, lease.ErrBadSignature)
		require.Equal(t, int64(4), e.get("w").Position, "journaled once per holder per epoch")
		es := e.read("w")
		require.Equal(t, journal.KindRejected, es[3].Kind)
		require.JSONEq(t, `{"holder":"n1","epoch":1,"reason":"bad_signature"}`, string(es[3].Payload))

		// Still the holder's: a good batch at the new head goes in.
		out = e.appendBatch("w", signed("w", "n1", 1, 4, 5, priv, "g"))
		require.NoError(t, out[0].Err)
		// A stale epoch's signed batch is refused for the epoch first.
		requireRefused(t, e.appendBatch("w", signed("w", "n1", 7, 5, 6, priv, "s")), journal.ReasonStaleEpoch, lease.ErrFenced)
		rep := e.audit("w")
		require.True(t, rep.OK(), "%v", rep.Violation)

		// Malformed signed batches are input errors that write nothing.
		before, err = e.fingerprint()
		require.NoError(t, err)
		bad := signed("w", "n1", 1, 6, 7, priv, "m1", "m2")
		bad[0].Signature = bad[1].Signature
		_, err = e.d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: "w", Requests: bad})
		require.ErrorIs(t, err, lease.ErrInvalid)
		bad = signed("w", "n1", 1, 6, 7, priv, "m1", "m2")
		bad[1].Signature = bad[1].Signature[:10]
		_, err = e.d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: "w", Requests: bad})
		require.ErrorIs(t, err, lease.ErrInvalid)
		after, err = e.fingerprint()
		require.NoError(t, err)
		require.Equal(t, before, after)
	}},
	{"KeyRotationTakesEffectAtTheNextGrant", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		a, privA := seeded(1)
		b, privB := seeded(2)
		c, privC := seeded(3)
		e.register("n1", a)
		e.register("n2", c)
		e.create("w", "n1")
		e.appendBatch("w", signed("w", "n1", 1, 1, 2, privA, "a"))
		e.register("n1", b)
		requireRefused(t, e.appendBatch("w", signed("w", "n1", 1, 2, 3, privB, "b")), journal.ReasonBadSignature, lease.ErrBadSignature)
		w := e.handoff("w", "n1", "n2", 1)
		require.Equal(t, []byte(c), w.HolderKey)
		e.appendBatch("w", signed("w", "n2", 2, 4, 5, privC, "c"))
		w = e.handoff("w", "n2", "n1", 2)
		require.Equal(t, []byte(b), w.HolderKey, "n1's next grant carries its new key")
		out := e.appendBatch("w", signed("w", "n1", 3, 6, 7, privB, "d"))
		require.NoError(t, out[0].Err)
		rep := e.audit("w")
		require.True(t, rep.OK(), "entries under the old key still verify: %v", rep.Violation)
		// The sweep's grant binds the key too.
		e.h.Clock.Advance(2 * term)
		to, swept, err := e.sweepHome("w")
		require.NoError(t, err)
		require.True(t, swept)
		require.Equal(t, "n1", to)
		require.Equal(t, []byte(b), e.get("w").HolderKey)
		require.True(t, e.audit("w").OK())
	}},
}
