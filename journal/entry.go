package journal

import (
	"time"
)

// Kind names what an entry is. Kinds under the reserved prefixes "lease.",
// "append." and "world." belong to Leasehold; every other valid kind is a
// user data entry.
type Kind string

// The lease and bookkeeping kinds (SPEC §4).
const (
	// KindGranted starts an epoch: payload Granted.
	KindGranted Kind = "lease.granted"
	// KindRenewed extends the current epoch's expiry: payload Renewed.
	KindRenewed Kind = "lease.renewed"
	// KindRevoked ends the current epoch; nobody holds the lease until the
	// next grant: payload Revoked.
	KindRevoked Kind = "lease.revoked"
	// KindHandedOff is the old holder's last act: it starts the next epoch
	// for the new holder: payload HandedOff.
	KindHandedOff Kind = "lease.handed_off"
	// KindRejected journals a refused append (epoch, holder or expiry), at
	// most once per holder per epoch: payload Rejected.
	KindRejected Kind = "append.rejected"
)

// IsLease reports whether k is one of the lease kinds.
func (k Kind) IsLease() bool {
	switch k {
	case KindGranted, KindRenewed, KindRevoked, KindHandedOff:
		return true
	}
	return false
}

// IsSystem reports whether k is written by the store (the grantor) rather
// than appended by a holder.
func (k Kind) IsSystem() bool { return k.IsLease() || k == KindRejected }

// Entry is one position of a world's journal.
//
// Epoch and Holder are the lease in force *after* the entry is applied: for
// a data entry, the epoch and holder it was appended under (which the append
// rule requires to be current); for lease.revoked, the ended epoch and no
// holder; for append.rejected, the unchanged lease in force.
type Entry struct {
	World     string
	Position  int64 // 1, 2, 3, …
	Epoch     int64
	Kind      Kind
	Holder    string
	Key       string    // optional idempotency key of the command that wrote it
	Payload   []byte    // compact JSON (see ValidatePayload)
	StoreTime time.Time // the store's clock at the write, microsecond precision, UTC
	PrevHash  []byte    // Hash of the entry at Position-1; empty at position 1
	Hash      []byte    // SHA-256 of Canonical(e)
	Signature []byte    // holder's ed25519 signature over Canonical(e); empty until signing lands
}

// StoreTimeResolution is the precision of store times: Postgres timestamptz
// keeps microseconds, so every store time is truncated to them before it is
// hashed, and both drivers store exactly that.
const StoreTimeResolution = time.Microsecond

// NormalizeTime truncates t to StoreTimeResolution in UTC, dropping the
// monotonic reading.
func NormalizeTime(t time.Time) time.Time {
	return time.UnixMicro(t.UnixMicro()).UTC()
}
