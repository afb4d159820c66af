package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
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
	b := make([]byte, 0, n)
	b = append(b, canonicalDomain...)
	b = appendBytes(b, []byte(e.World))
	b = binary.BigEndian.AppendUint64(b, uint64(e.Position))
	b = binary.BigEndian.AppendUint64(b, uint64(e.Epoch))
	b = appendBytes(b, []byte(e.Kind))
	b = appendBytes(b, []byte(e.Holder))
	b = appendBytes(b, []byte(e.Key))
	b = binary.BigEndian.AppendUint64(b, uint64(e.StoreTime.UnixMicro()))
	b = appendBytes(b, e.PrevHash)
	b = appendBytes(b, e.Payload)
	return b
}

func appendBytes(b, v []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}

// ComputeHash returns SHA-256(Canonical(e)).
func ComputeHash(e *Entry) []byte {
	sum := sha256.Sum256(Canonical(e))
	return sum[:]
}

// Seal sets e.Hash from its canonical encoding.
func Seal(e *Entry) { e.Hash = ComputeHash(e) }

// HashValid reports whether e.Hash matches its canonical encoding.
func HashValid(e *Entry) bool { return bytes.Equal(e.Hash, ComputeHash(e)) }
