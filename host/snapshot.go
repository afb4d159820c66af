package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/lease"
)

// Snapshotter is implemented by a State that can be saved whole and
// restored, so a node preparing a world restores the newest snapshot and
// replays only the journal after it instead of every entry from position
// 1 (a spill node's Prepare, an acquire after a restart, the rebuild of a
// dirty mirror). It is optional: a State without it is always replayed.
//
// Restore is called on a fresh State (Program.New) with bytes Snapshot
// returned, possibly on another node and by a later build of the program:
// the encoding is the program's to keep compatible, and Restore must
// refuse (an error) what it cannot read — the host then replays the whole
// journal, as if there were no snapshot.
type Snapshotter interface {
	// Snapshot encodes the state. The host calls it from the world's loop,
	// between turns, when the state is the fold of the journal through a
	// position.
	Snapshot() ([]byte, error)
	// Restore replaces the state with one Snapshot encoded.
	Restore(data []byte) error
}

// snapshotVersion is the envelope's format (below).
const snapshotVersion = 1

// snapshotKeys bounds the replies a snapshot carries: the newest ones,
// which are the retries a handoff or a restart is likely to meet. The
// rest are not lost — the store's key index answers a forgotten key with
// its first position, and the host reads the reply there — so this bounds
// the snapshot's size and the time the world's loop spends encoding it
// (a hot world remembers up to Config.MaxKeys replies), not idempotency.
const snapshotKeys = 4096

// snapshotBody is what a host stores as a snapshot's data: the program's
// bytes and the mirror's own memory at the position — the replies of the
// keys it remembers (so a retry after a restore is answered without a
// store round trip, and its effects are not invoked again) and the
// effects started and not yet turned (effects.go). The stored data is the
// SHA-256 of (world, program, position, entry hash, body) followed by the
// body: a snapshot whose bytes changed in the store, or that was copied
// to another world or position, does not verify and is ignored.
type snapshotBody struct {
	V     int             `json:"v"`
	State []byte          `json:"state"`
	Keys  []snapshotKey   `json:"keys,omitempty"` // oldest first
	FX    []snapshotFX    `json:"fx,omitempty"`
	Extra json.RawMessage `json:"extra,omitempty"` // reserved
}

type snapshotKey struct {
	Key     string          `json:"k"`
	Hash    string          `json:"h"`
	Reply   json.RawMessage `json:"r,omitempty"`
	Pos     int64           `json:"p"`
	Effects []EffectOutcome `json:"e,omitempty"`
}

type snapshotFX struct {
	Command  string          `json:"c"`
	Key      string          `json:"k"`
	Attempt  int             `json:"a"`
	Pending  bool            `json:"pending,omitempty"`
	Pos      int64           `json:"p"`
	Happened bool            `json:"happened,omitempty"`
	Result   json.RawMessage `json:"r,omitempty"`
}

// errSnapshotMismatch marks a snapshot that does not verify.
var errSnapshotMismatch = errors.New("the snapshot does not verify")

func snapshotSum(world, program string, pos int64, entryHash, body []byte) []byte {
	h := sha256.New()
	var n [8]byte
	for _, s := range [][]byte{[]byte(world), []byte(program), entryHash} {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write(s)
	}
	binary.BigEndian.PutUint64(n[:], uint64(pos))
	h.Write(n[:])
	h.Write(body)
	return h.Sum(nil)
}

// encodeSnapshot takes the snapshot's contents from the mirror: the
// program's encoding (on the loop: the state is the loop's) and copies of
// the newest replies and the open effects, which the put marshals off the
// loop (a reply's bytes are never changed once recorded). ok is false when
// the state is no Snapshotter or the mirror is not the fold of the journal
// through m.pos (dirty, or nothing folded).
func (m *mirror) encodeSnapshot() (b *snapshotBody, pos int64, ok bool, err error) {
	sn, can := m.state.(Snapshotter)
	if !can || m.dirty || m.pos < 1 {
		return nil, 0, false, nil
	}
	st, err := sn.Snapshot()
	if err != nil {
		return nil, 0, false, fmt.Errorf("world %s: snapshotting the state at %d: %w", m.world, m.pos, err)
	}
	b = &snapshotBody{V: snapshotVersion, State: st}
	recent := m.order[max(len(m.order)-snapshotKeys, 0):]
	b.Keys = make([]snapshotKey, 0, len(recent))
	for _, ka := range recent {
		r := m.keys[ka.key]
		b.Keys = append(b.Keys, snapshotKey{Key: ka.key, Hash: r.hash, Reply: r.reply, Pos: r.pos, Effects: r.effects})
	}
	for c, byKey := range m.fx {
		for k, st := range byKey {
			b.FX = append(b.FX, snapshotFX{Command: c, Key: k, Attempt: st.attempt, Pending: st.pending, Pos: st.pos, Happened: st.happened, Result: st.result})
		}
	}
	return b, m.pos, true, nil
}

// putSnapshot marshals what encodeSnapshot took at pos, reads the
// journal's hash at pos (the entry is immutable, so all this runs off the
// world's loop) and stores the snapshot under it, fenced by epoch (the
// store refuses it once the world has moved past that epoch).
func putSnapshot(ctx context.Context, s Store, ss driver.SnapshotStore, w, program string, epoch, pos int64, b *snapshotBody) error {
	body, err := json.Marshal(b)
	if err != nil {
		return err
	}
	es, err := s.JournalRead(ctx, &driver.JournalReadParams{World: w, From: pos, Limit: 1})
	if err != nil {
		return err
	}
	if len(es) == 0 || es[0].Position != pos {
		return fmt.Errorf("world %s: no journal entry at %d to snapshot at: %w", w, pos, lease.ErrCorrupt)
	}
	hash := es[0].Hash
	data := append(snapshotSum(w, program, pos, hash, body), body...)
	return ss.WorldSnapshotPut(ctx, &driver.WorldSnapshotPutParams{World: w, Program: program, Epoch: epoch, Position: pos, EntryHash: hash, Data: data})
}

// restore loads the world's snapshot into an empty mirror, after checking
// it against the journal: the entry at its position must have the hash
// it was taken under (the hash chain then vouches for every entry before
// it), and its data must verify and restore. false, with the reason, when
// there is none or it is not trusted: the mirror is left empty and the
// caller replays from position 1. Reads counts the journal entries read.
func (m *mirror) restore(ctx context.Context, s Store, ss driver.SnapshotStore, now time.Time) (ok bool, reads int, err error) {
	snap, err := ss.WorldSnapshotGet(ctx, &driver.WorldSnapshotGetParams{World: m.world})
	if err != nil {
		return false, 0, err
	}
	if snap.Program != m.prog.Name() {
		return false, 0, fmt.Errorf("%w: taken by program %q", errSnapshotMismatch, snap.Program)
	}
	es, err := s.JournalRead(ctx, &driver.JournalReadParams{World: m.world, From: snap.Position, Limit: 1})
	if err != nil {
		return false, 0, err
	}
	if len(es) == 0 || es[0].Position != snap.Position || !bytes.Equal(es[0].Hash, snap.EntryHash) {
		return false, len(es), fmt.Errorf("%w: the journal's entry at %d is not the one it was taken at", errSnapshotMismatch, snap.Position)
	}
	if len(snap.Data) < sha256.Size {
		return false, 1, fmt.Errorf("%w: %d bytes", errSnapshotMismatch, len(snap.Data))
	}
	sum, body := snap.Data[:sha256.Size], snap.Data[sha256.Size:]
	if !bytes.Equal(sum, snapshotSum(m.world, snap.Program, snap.Position, snap.EntryHash, body)) {
		return false, 1, fmt.Errorf("%w: its checksum", errSnapshotMismatch)
	}
	var b snapshotBody
	if err := json.Unmarshal(body, &b); err != nil || b.V != snapshotVersion {
		return false, 1, fmt.Errorf("%w: an envelope this host cannot read (%v)", errSnapshotMismatch, err)
	}
	st := m.prog.New()
	sn, can := st.(Snapshotter)
	if !can {
		return false, 1, fmt.Errorf("%w: the program's state has no Restore", errSnapshotMismatch)
	}
	if err := sn.Restore(b.State); err != nil {
		return false, 1, fmt.Errorf("%w: the program refused it: %v", errSnapshotMismatch, err)
	}
	m.reset()
	m.state, m.pos = st, snap.Position
	for _, k := range b.Keys {
		m.remember(k.Key, keyRecord{hash: k.Hash, reply: k.Reply, pos: k.Pos, effects: k.Effects}, now)
	}
	for _, f := range b.FX {
		if m.fx == nil {
			m.fx = map[string]map[string]*fxState{}
		}
		if m.fx[f.Command] == nil {
			m.fx[f.Command] = map[string]*fxState{}
		}
		m.fx[f.Command][f.Key] = &fxState{attempt: f.Attempt, pending: f.Pending, pos: f.Pos, happened: f.Happened, result: f.Result}
	}
	return true, 1, nil
}

// mirrorSnaps wires a mirror to the host's snapshot store and counters
// (a store without driver.SnapshotStore: none).
func (h *Host) mirrorSnaps() mirrorSnaps {
	ms := mirrorSnaps{every: h.cfg.SnapshotEvery, log: h.log,
		read: &h.entriesRead, restored: &h.snapsRestored, ignored: &h.snapsIgnored, taken: &h.snapsTaken}
	if ss, ok := h.cfg.Store.(driver.SnapshotStore); ok {
		ms.store = ss
	}
	return ms
}

// maybeSnapshot snapshots the world when its mirror has folded
// SnapshotEvery positions past the last snapshot (force: whenever it has
// folded any), writing under epoch: the held one, or after a handoff the
// epoch the handoff started (the parting snapshot is of the journal
// through the holder's last act, which the new holder replays past; a
// later grant fences it). Call it from the world's loop with nothing in
// the air: the state is encoded there, and the put runs off the loop, one
// per world at a time, so a turn never waits for it. A failure only
// leaves the older snapshot in place (the log says why).
func (hw *hosted) maybeSnapshot(ctx context.Context, epoch int64, force bool) {
	m := hw.m
	if m.snap.store == nil || m.snap.every < 0 || epoch < 1 || m.pos <= m.snapAt || (!force && m.pos-m.snapAt < m.snap.every) {
		return
	}
	if !m.snapping.CompareAndSwap(false, true) {
		return
	}
	body, pos, ok, err := m.encodeSnapshot()
	if !ok {
		m.snapping.Store(false)
		if err != nil {
			hw.h.log.Warn("world snapshot not taken", "world", hw.world, "err", err)
		}
		return
	}
	m.snapAt = pos
	h, w, prog := hw.h, hw.world, hw.h.cfg.Program.Name()
	h.life.Go("snapshot "+w, func() {
		defer m.snapping.Store(false)
		sctx, cancel := h.cfg.Runtime.WithTimeout(ctx, h.cfg.Timing.Lease)
		defer cancel()
		if err := putSnapshot(sctx, h.cfg.Store, m.snap.store, w, prog, epoch, pos, body); err != nil {
			h.log.Warn("world snapshot not stored", "world", w, "position", pos, "err", err)
			return
		}
		m.snap.taken.Add(1)
	})
}
