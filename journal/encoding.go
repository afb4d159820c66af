package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"sync"
)

// canonicalDomain prefixes every canonical encoding, so a hash or signature
// over a journal entry can never be confused with one over other bytes, and
// a future v2 encoding is distinguishable.
const canonicalDomain = "leasehold/journal/v1\n"

// Canonical returns the bytes that an entry's Hash (SHA-256) and, once
// signing lands, its holder's ed25519 Signature cover. The encoding is fixed
// from the first release (changing it would break every existing chain):
//
//	"leasehold/journal/v1\n"           the domain separator, 21 bytes
//	u32 len ‖ world                     UTF-8
//	u64 position                        big-endian
//	u64 epoch                           big-endian
//	u32 len ‖ kind
//	u32 len ‖ holder
//	u32 len ‖ key
//	i64 store time                      Unix microseconds, big-endian two's complement
//	u32 len ‖ prev hash                 0 bytes at position 1, else 32
//	u32 len ‖ payload                   the compact JSON bytes as stored
//
// The Hash and Signature fields are not covered: the chain links hashes,
// and a signature can be added to an entry without changing any hash.
func Canonical(e *Entry) []byte {
	n := len(canonicalDomain) + 4*6 + 8*3 +
		len(e.World) + len(e.Kind) + len(e.Holder) + len(e.Key) + len(e.PrevHash) + len(e.Payload)
	return appendCanonical(make([]byte, 0, n), e)
}

func appendCanonical(b []byte, e *Entry) []byte {
	b = append(b, canonicalDomain...)
	b = appendString(b, e.World)
	b = binary.BigEndian.AppendUint64(b, uint64(e.Position))
	b = binary.BigEndian.AppendUint64(b, uint64(e.Epoch))
	b = appendString(b, string(e.Kind))
	b = appendString(b, e.Holder)
	b = appendString(b, e.Key)
	b = binary.BigEndian.AppendUint64(b, uint64(e.StoreTime.UnixMicro()))
	b = appendBytes(b, e.PrevHash)
	b = appendBytes(b, e.Payload)
	return b
}

func appendBytes(b, v []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}

func appendString(b []byte, v string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}

// scratch lends the encodings a buffer to hash from: hashing every entry
// of every batch (planning, sealing, signing, verifying) is on the append
// path, and the encoding itself need not outlive the hash.
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// hashOf is SHA-256 of what enc appends to an empty buffer.
func hashOf(enc func([]byte) []byte) [sha256.Size]byte {
	bp := scratch.Get().(*[]byte)
	b := enc((*bp)[:0])
	sum := sha256.Sum256(b)
	if cap(b) <= 64<<10 { // a buffer grown for a huge payload is let go
		*bp = b
		scratch.Put(bp)
	}
	return sum
}

// ComputeHash returns SHA-256(Canonical(e)).
func ComputeHash(e *Entry) []byte {
	sum := hashOf(func(b []byte) []byte { return appendCanonical(b, e) })
	return sum[:]
}

// Seal sets e.Hash from its canonical encoding.
func Seal(e *Entry) { e.Hash = ComputeHash(e) }

// HashValid reports whether e.Hash matches its canonical encoding.
func HashValid(e *Entry) bool { return bytes.Equal(e.Hash, ComputeHash(e)) }
