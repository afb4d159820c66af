package server

import (
	"encoding/hex"
	"encoding/json"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/httpapi"
	"github.com/leasehold/leasehold/journal"
)

// The world endpoints' JSON shapes. Every mutating request carries the
// epoch it acts under: the store applies it only while that epoch is
// current (the fenced problem otherwise, naming the epoch and holder in
// force).

// worldBody is a world's head.
type worldBody struct {
	World     string `json:"world"`
	Home      string `json:"home"`
	Position  int64  `json:"position"`
	Epoch     int64  `json:"epoch"`
	Holder    string `json:"holder,omitempty"`
	ExpiresAt string `json:"expires_at,omitempty"`
	TermMS    int64  `json:"term_ms"`
	GrantedAt int64  `json:"granted_position"`
	HolderKey string `json:"holder_key,omitempty"` // hex: the key the epoch's appends must be signed with
	LastHash  string `json:"last_hash,omitempty"`  // hex
	CreatedAt string `json:"created_at"`
	// RunwayMS, on an answer to a grant, renew or handoff: how long the
	// new holder's lease runs at least, measured from the request's send
	// — the holder's deadline is its own send time plus runway_ms.
	RunwayMS int64 `json:"runway_ms,omitempty"`
}

func worldOf(w *driver.World) worldBody {
	b := worldBody{World: w.World, Home: w.Home, Position: w.Position, Epoch: w.Epoch, Holder: w.Holder,
		TermMS: w.Term.Milliseconds(), GrantedAt: w.GrantedAt, CreatedAt: stamp(w.CreatedAt)}
	if w.Holder != "" {
		b.ExpiresAt = stamp(w.ExpiresAt)
	}
	if len(w.HolderKey) > 0 {
		b.HolderKey = hex.EncodeToString(w.HolderKey)
	}
	if len(w.LastHash) > 0 {
		b.LastHash = hex.EncodeToString(w.LastHash)
	}
	return b
}

type worldResponse struct {
	World worldBody `json:"world"`
}

type worldCreateRequest struct {
	World httpapi.StrictString `json:"world"`
	Home  httpapi.StrictString `json:"home"`
}

type worldGrantRequest struct {
	Holder httpapi.StrictString `json:"holder"`
	Epoch  int64                `json:"epoch"` // the epoch the caller believes current
}

type worldRenewRequest struct {
	Holder httpapi.StrictString `json:"holder"`
	Epoch  int64                `json:"epoch"`
}

type worldHandoffRequest struct {
	From  httpapi.StrictString `json:"from"`
	To    httpapi.StrictString `json:"to"`
	Epoch int64                `json:"epoch"`
}

type worldRevokeRequest struct {
	Epoch  int64                `json:"epoch"`
	Reason httpapi.StrictString `json:"reason"`
}

// appendRequest is a batch of data entries by one holder under one epoch,
// written in one transaction. Signed (signature set): position is where
// the first entry must land, and the signature is the holder's ed25519
// signature over the batch (journal.SignBatch); the batch is written whole
// or not at all.
type appendRequest struct {
	Holder       httpapi.StrictString `json:"holder"`
	Epoch        int64                `json:"epoch"`
	SeenPosition int64                `json:"seen_position"`
	Entries      []appendEntry        `json:"entries"`
	Position     int64                `json:"position"`
	Signature    []byte               `json:"signature"` // base64
}

type appendEntry struct {
	Kind    httpapi.StrictString `json:"kind"`
	Key     httpapi.StrictString `json:"key"`
	Payload json.RawMessage      `json:"payload"`
}

type appendResponse struct {
	// Positions are the entries' positions, in order; a key appended
	// before answers its first position.
	Positions []int64 `json:"positions"`
}

// entryBody is one journal entry as read.
type entryBody struct {
	Position  int64           `json:"position"`
	Epoch     int64           `json:"epoch"`
	Kind      string          `json:"kind"`
	Holder    string          `json:"holder,omitempty"`
	Key       string          `json:"key,omitempty"`
	Payload   json.RawMessage `json:"payload,omitempty"`
	StoreTime string          `json:"store_time"`
	PrevHash  string          `json:"prev_hash,omitempty"` // hex
	Hash      string          `json:"hash"`                // hex
	Signature []byte          `json:"signature,omitempty"` // base64
}

func entryOf(e *journal.Entry) entryBody {
	return entryBody{Position: e.Position, Epoch: e.Epoch, Kind: string(e.Kind), Holder: e.Holder, Key: e.Key,
		Payload: raw(e.Payload), StoreTime: stamp(e.StoreTime), PrevHash: hex.EncodeToString(e.PrevHash),
		Hash: hex.EncodeToString(e.Hash), Signature: e.Signature}
}

type journalPage struct {
	Entries []entryBody `json:"entries"`
	// Next is the from of the following page; absent on the last one.
	Next string `json:"next,omitempty"`
}
