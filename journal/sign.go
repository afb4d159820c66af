package journal

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// Signatures (SPEC §4, docs/design/worlds.md "Node keys and signatures").
//
// A holder whose grant carries a public key signs what it appends. One
// signature covers one batch — the entries one append call carries, at
// consecutive positions — and sits on the batch's last entry; the entries
// before it in the batch have an empty Signature. Signing each entry alone
// would cost an ed25519 signature and a verification per command (17 µs +
// 41 µs on the reference box: more than one core at 20,000 commands/s); a
// batch pays them once.
//
// The signature is over a digest chained through the batch:
//
//	d0 = SHA-256("leasehold/journal/sign/v1\n")
//	di = SHA-256(d(i-1) ‖ SignedBody(entry i))
//	signature = ed25519(private key, dn)
//
// SignedBody is the canonical encoding without the two fields the store
// sets after the holder has signed: the store time and the previous hash.
// It keeps the world, position, epoch, kind, holder, key and payload, so a
// signed entry cannot be replayed at another position, under another
// epoch or into another world; the hash chain (which covers the store time
// and the previous hash, and which the signature does not replace) binds
// the rest. The fold carries the digest from entry to entry (State.SignFrom,
// State.SignDigest), so a verifier needs nothing but the journal: the key
// is in the grant that started the epoch.

// SignatureSize is the length of an entry's signature: an ed25519 signature.
const SignatureSize = ed25519.SignatureSize

// signDomain starts every batch digest.
const signDomain = "leasehold/journal/sign/v1\n"

var signStart = func() []byte { d := sha256.Sum256([]byte(signDomain)); return d[:] }()

// SignedBody returns the bytes of e that its batch signature covers.
func SignedBody(e *Entry) []byte {
	return appendSignedBody(make([]byte, 0, 4*5+8*2+len(e.World)+len(e.Kind)+len(e.Holder)+len(e.Key)+len(e.Payload)), e)
}

func appendSignedBody(b []byte, e *Entry) []byte {
	b = appendString(b, e.World)
	b = binary.BigEndian.AppendUint64(b, uint64(e.Position))
	b = binary.BigEndian.AppendUint64(b, uint64(e.Epoch))
	b = appendString(b, string(e.Kind))
	b = appendString(b, e.Holder)
	b = appendString(b, e.Key)
	b = appendBytes(b, e.Payload)
	return b
}

// chainDigest extends a batch digest (nil: a new batch) by one entry.
func chainDigest(d []byte, e *Entry) []byte {
	if d == nil {
		d = signStart
	}
	sum := hashOf(func(b []byte) []byte { return appendSignedBody(append(b, d...), e) })
	return sum[:]
}

// BatchDigest is the digest a signature over entries covers: entries are
// one batch at consecutive positions, in order.
func BatchDigest(entries []Entry) []byte {
	if len(entries) == 0 {
		return nil
	}
	// Chained in one array, not a new slice per entry: a batch is hashed
	// by its signer, the store and the planner, entry by entry.
	var d [sha256.Size]byte
	prev := signStart
	for i := range entries {
		e := &entries[i]
		d = hashOf(func(b []byte) []byte { return appendSignedBody(append(b, prev...), e) })
		prev = d[:]
	}
	return prev
}

// SignBatch signs a batch: the signature to put on its last entry.
func SignBatch(key ed25519.PrivateKey, entries []Entry) []byte {
	return ed25519.Sign(key, BatchDigest(entries))
}

// VerifyBatch reports whether sig is pub's signature over entries.
func VerifyBatch(pub []byte, entries []Entry, sig []byte) bool {
	return len(pub) == ed25519.PublicKeySize && len(sig) == SignatureSize && len(entries) > 0 &&
		ed25519.Verify(ed25519.PublicKey(pub), BatchDigest(entries), sig)
}

// EncodeKey is how a public key is written in a grant's payload: lower-case
// hex of its 32 bytes.
func EncodeKey(pub []byte) string { return hex.EncodeToString(pub) }

// DecodeKey parses a grant payload's key: "" is no key.
func DecodeKey(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != ed25519.PublicKeySize || EncodeKey(b) != s {
		return nil, fmt.Errorf("key %q is not %d bytes of lower-case hex", s, ed25519.PublicKeySize)
	}
	return b, nil
}

// ValidatePublicKey checks a node's public key for registration.
func ValidatePublicKey(pub []byte) error {
	if len(pub) != ed25519.PublicKeySize {
		return invalid("public_key", "%d bytes, an ed25519 public key is %d", len(pub), ed25519.PublicKeySize)
	}
	return nil
}
