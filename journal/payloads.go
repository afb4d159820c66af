package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Granted is the payload of lease.granted.
type Granted struct {
	Holder            string `json:"holder"`
	Epoch             int64  `json:"epoch"`
	TermMS            int64  `json:"term_ms"`
	GrantedAtPosition int64  `json:"granted_at_position"`
	// Key is the holder's registered ed25519 public key (EncodeKey) when
	// the store granted the lease; the holder signs every entry of the
	// epoch with it. Empty (and absent from the JSON) when it had none.
	Key string `json:"key,omitempty"`
}

// Renewed is the payload of lease.renewed.
type Renewed struct {
	Epoch  int64 `json:"epoch"`
	TermMS int64 `json:"term_ms"`
}

// Revoked is the payload of lease.revoked. Reason is "expiry" when the
// expiry sweep wrote it, otherwise the operator's reason.
type Revoked struct {
	Holder string `json:"holder"`
	Epoch  int64  `json:"epoch"`
	Reason string `json:"reason"`
}

// ReasonExpiry is the Revoked.Reason the expiry sweep writes.
const ReasonExpiry = "expiry"

// HandedOff is the payload of lease.handed_off.
type HandedOff struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Epoch  int64  `json:"epoch"` // the new epoch
	TermMS int64  `json:"term_ms"`
	Key    string `json:"key,omitempty"` // the new holder's public key, as in Granted
}

// Rejected is the payload of append.rejected: who was refused, under which
// epoch they claimed, and why.
type Rejected struct {
	Holder string `json:"holder"`
	Epoch  int64  `json:"epoch"`
	Reason Reason `json:"reason"`
}

// termOf returns the duration of a term_ms field, saturating; Fold refuses
// terms outside (0, MaxTerm] before using one.
func termOf(ms int64) time.Duration {
	if ms > int64(MaxTerm/time.Millisecond) {
		return MaxTerm + time.Millisecond
	}
	return time.Duration(ms) * time.Millisecond
}

// termPayloadValid reports whether a term_ms field is a valid term.
func termPayloadValid(ms int64) bool { return ms > 0 && ValidateTerm(termOf(ms)) == nil }

// termMS converts a term to whole milliseconds, rounding up so a term is
// never shortened by the encoding.
func termMS(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("journal: marshal %T: %v", v, err)) // only fixed structs are marshalled
	}
	return b
}

// decodeStrict decodes a system payload, refusing unknown fields and
// trailing data: a payload the fold cannot fully account for is a violation.
func decodeStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data after payload")
	}
	return nil
}
