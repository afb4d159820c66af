package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// mirror is one world's state folded from its journal on this node, with
// the replies of recent commands by key.
//
// The state may run ahead of the journal while a batch is decided and in
// flight (spec: its events are applied as each command is decided, so the
// next command sees them); if the batch is not journaled exactly as
// decided, the mirror is dirty and is rebuilt from the journal before the
// next decision.
type mirror struct {
	world string
	prog  Program
	state State
	pos   int64 // position replayed (or journaled by this node) through
	dirty bool

	fx     map[string]map[string]*fxState // effects of commands not yet turned, by command and effect key (effects.go)
	keys   map[string]keyRecord
	order  []keyAge // keys in the order they were recorded, for retention
	maxAge time.Duration
	maxLen int

	snap     mirrorSnaps // snapshot.go; its store nil: no snapshots
	snapAt   int64       // the position of the newest snapshot this mirror took or restored
	snapping atomic.Bool // a snapshot's put is in the air (one at a time per world)
}

// mirrorSnaps is what a mirror needs of its host for snapshots, and the
// host's counters it adds to.
type mirrorSnaps struct {
	store driver.SnapshotStore
	every int64 // Config.SnapshotEvery
	log   *slog.Logger
	// read counts the journal entries the mirror read (replays and the
	// snapshot checks): the load-independent cost of a Prepare.
	read, restored, ignored, taken *atomic.Int64
}

type keyRecord struct {
	hash    string
	reply   json.RawMessage
	pos     int64
	effects []EffectOutcome
}

type keyAge struct {
	key string
	at  time.Time
}

func newMirror(w string, p Program, maxAge time.Duration, maxLen int, snap mirrorSnaps) *mirror {
	return &mirror{world: w, prog: p, state: p.New(), keys: map[string]keyRecord{}, maxAge: maxAge, maxLen: maxLen, snap: snap}
}

// reset forgets everything: the next catchUp replays from position 1.
func (m *mirror) reset() {
	m.state, m.pos, m.dirty = m.prog.New(), 0, false
	m.keys, m.order, m.fx = map[string]keyRecord{}, nil, nil
}

// remember records a key's reply; old ones beyond the retention are
// forgotten (a retry of a forgotten key is still applied once: the store's
// key index answers its first position, and the host reads the reply
// there).
func (m *mirror) remember(key string, r keyRecord, now time.Time) {
	if _, ok := m.keys[key]; !ok {
		m.order = append(m.order, keyAge{key, now})
	}
	m.keys[key] = r
	for len(m.order) > 0 && (len(m.order) > m.maxLen || now.Sub(m.order[0].at) > m.maxAge) {
		delete(m.keys, m.order[0].key)
		m.order[0] = keyAge{}
		m.order = m.order[1:]
	}
}

// fold applies one journal entry read from the store.
func (m *mirror) fold(e *journal.Entry, now time.Time) error {
	if e.Position != m.pos+1 {
		return fmt.Errorf("world %s: mirror at %d read position %d: %w", m.world, m.pos, e.Position, lease.ErrCorrupt)
	}
	if e.Kind == TurnKind {
		t, err := decodeTurn(e)
		if err != nil {
			return err
		}
		if t.Program != m.prog.Name() {
			return &ProgramError{World: m.world, Program: m.prog.Name(), Position: e.Position,
				Err: fmt.Errorf("%w (%q)", errProgramMismatch, t.Program)}
		}
		for _, ev := range t.Events {
			if err := m.state.Apply(ev); err != nil {
				return &ProgramError{World: m.world, Program: m.prog.Name(), Position: e.Position,
					Err: fmt.Errorf("applying %s: %v: %w", ev.Kind, err, lease.ErrCorrupt)}
			}
		}
		m.remember(e.Key, keyRecord{hash: t.Hash, reply: t.Reply, pos: e.Position, effects: t.Effects}, now)
		delete(m.fx, e.Key) // a turn ends its command's effects
	}
	if e.Kind == EffectKind || e.Kind == EffectResolvedKind {
		if err := m.foldEffect(e); err != nil {
			return err
		}
	}
	m.pos = e.Position
	return nil
}

// catchUp replays the journal from the mirror's position to the head (a
// dirty mirror from position 1). An empty mirror first restores the
// world's snapshot, when there is one it can trust (snapshot.go), and
// replays only what follows it.
//
// A rebuild (a dirty mirror) that fails stays dirty: reset has already
// forgotten the state, and a mirror that looked clean but stopped short
// of the head would have the next batch decided on it, and that batch's
// landing move it past entries it never folded.
func (m *mirror) catchUp(ctx context.Context, s Store, now func() time.Time) (err error) {
	if m.dirty {
		m.reset()
		defer func() {
			if err != nil {
				m.dirty = true
			}
		}()
	}
	if m.pos == 0 && m.snap.store != nil {
		m.restoreSnapshot(ctx, s, now())
	}
	for {
		es, err := s.JournalRead(ctx, &driver.JournalReadParams{World: m.world, From: m.pos + 1, Limit: 1000})
		if err != nil {
			return fmt.Errorf("world %s: replaying from %d: %w", m.world, m.pos+1, err)
		}
		m.snap.read.Add(int64(len(es)))
		t := now()
		for i := range es {
			if err := m.fold(&es[i], t); err != nil {
				m.dirty = true
				return err
			}
		}
		if len(es) < 1000 {
			return nil
		}
	}
}

// restoreSnapshot restores the world's snapshot into the empty mirror,
// or leaves it empty (and says why in the log) for a replay from 1: a
// snapshot is a cache, so no failure of it is the caller's error.
func (m *mirror) restoreSnapshot(ctx context.Context, s Store, now time.Time) {
	ok, reads, err := m.restore(ctx, s, m.snap.store, now)
	m.snap.read.Add(int64(reads))
	switch {
	case ok:
		m.snapAt = m.pos
		m.snap.restored.Add(1)
	case errors.Is(err, errSnapshotMismatch):
		m.snap.ignored.Add(1)
		m.snap.log.Warn("world snapshot not trusted; replaying the journal from position 1", "world", m.world, "err", err)
	case errors.Is(err, lease.ErrNotFound):
	default: // the store did not answer: the replay that follows meets the same store
		m.snap.log.Debug("world snapshot not read; replaying the journal from position 1", "world", m.world, "err", err)
	}
}

// readTurn reads the turn entry at pos (a key the store had and the mirror
// forgot).
func readTurn(ctx context.Context, s Store, w string, pos int64) (*journal.Entry, *turn, error) {
	es, err := s.JournalRead(ctx, &driver.JournalReadParams{World: w, From: pos, Limit: 1})
	if err != nil {
		return nil, nil, err
	}
	if len(es) == 0 || es[0].Position != pos || es[0].Kind != TurnKind {
		return nil, nil, fmt.Errorf("world %s: no turn entry at position %d: %w", w, pos, lease.ErrCorrupt)
	}
	t, err := decodeTurn(&es[0])
	return &es[0], t, err
}
