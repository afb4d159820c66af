package host

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// TurnKind is the kind of the journal entry a host appends for each
// applied command: one entry per command, carrying the command's key (so
// the store's key rule applies it once per world, forever, in any epoch),
// the program's name, the hash of the command's payload, the events and
// the reply.
const TurnKind journal.Kind = "host.turn"

// BandKind is the kind of the entry a holder appends for a hot-world band
// transition, as its last data entry before the move: payload
// {"state": "spill"|"home", "to", "reason", "load"}.
const BandKind journal.Kind = "host.band"

// turn is the payload of a TurnKind entry. The command's payload itself is
// not journaled, only its hash: the events are the facts, and the hash is
// what tells a retry from a key reused for another command.
type turn struct {
	Program string          `json:"p"`
	Hash    string          `json:"h"`
	Events  []Event         `json:"e,omitempty"`
	Reply   json.RawMessage `json:"r,omitempty"`
	Effects []EffectOutcome `json:"x,omitempty"`
}

// commandHash is the hash of a command's compact payload: unpadded
// base64url of its SHA-256.
func commandHash(compact []byte) string {
	sum := sha256.Sum256(compact)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// encodeTurn is the entry payload for a decided command; too large or not
// JSON is refused (nothing journaled).
func encodeTurn(t *turn) ([]byte, error) {
	for i := range t.Events {
		if err := journal.ValidateID("event kind", t.Events[i].Kind); err != nil {
			return nil, err
		}
	}
	b, ok := appendTurn(make([]byte, 0, turnSize(t)), t) // turn_encode.go
	if !ok {
		var err error
		if b, err = json.Marshal(t); err != nil {
			return nil, fmt.Errorf("turn: %v: %w", err, lease.ErrInvalid)
		}
	}
	if len(b) > journal.MaxPayloadBytes {
		return nil, fmt.Errorf("turn: its entry would be %d bytes, over the limit of %d (journal.MaxPayloadBytes): %w",
			len(b), journal.MaxPayloadBytes, lease.ErrInvalid)
	}
	return b, nil
}

func decodeTurn(e *journal.Entry) (*turn, error) {
	if t, ok := parseTurn(e.Payload); ok { // turn_decode.go
		return &t, nil
	}
	var t turn
	if err := json.Unmarshal(e.Payload, &t); err != nil {
		return nil, fmt.Errorf("turn entry at position %d: %v: %w", e.Position, err, lease.ErrCorrupt)
	}
	return &t, nil
}

// turnSize is the length of t's payload when appendTurn encodes it.
func turnSize(t *turn) int {
	n := len(`{"p":"","h":""}`) + len(t.Program) + len(t.Hash) + len(`,"e":[]`) + len(`,"r":`) + len(t.Reply)
	for i := range t.Events {
		n += len(`{"k":"","d":},`) + len(t.Events[i].Kind) + len(t.Events[i].Data)
	}
	return n
}
