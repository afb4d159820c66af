package host

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// World turns' side effects (SPEC §4 "Commands and effects"): a program's
// Decide may ask for effects; the host runs them through the world's own
// journal as an epoch-fenced ledger keyed by command key + effect key, so a
// command retried on another holder — after a handoff, a crash or a
// mid-turn expiry — never invokes an effect a second time without an
// uncertain report. For each effect of a command, in this order:
//
//  1. the gate: the holder's runway (from its last confirmed renewal's
//     send, minus S) must exceed the effect's MaxDuration + T_drain;
//  2. the intent: a host.effect entry keyed fx:<id>:<attempt>:<epoch>, appended
//     under the epoch (fenced like every append, signed like every batch);
//  3. the call: Effector.Invoke, with a deadline inside the gate's window,
//     the epoch as fence token and a stable idempotency key;
//  4. the commit: the command's turn entry, which records each effect's
//     outcome. A turn entry ends its command's effects.
//
// A mirror that folds an intent with no turn after it (the holder lost the
// lease between 2 and 4) holds an *uncertain* effect: the host never
// invokes it again on its own. If the Effector is also a Reconciler, the
// host asks it (with the idempotency key) whether the effect happened and
// journals the answer as host.effect_resolved; otherwise the command is
// answered *UncertainEffectError until ResolveEffect settles it.

// EffectKind is the kind of an effect's intent entry.
const EffectKind journal.Kind = "host.effect"

// EffectResolvedKind is the kind of the entry that settles an uncertain
// effect.
const EffectResolvedKind journal.Kind = "host.effect_resolved"

// EffectRequest is one side effect a Decision asks for.
type EffectRequest struct {
	// Key names the effect within its command: an identifier.
	Key string
	// Payload is handed to the Effector, JSON.
	Payload json.RawMessage
	// MaxDuration is how long the call may take; the gate needs that much
	// runway (plus T_drain) before the intent, and the call's context ends
	// within it. At most T_lease − S − T_renew − T_drain.
	MaxDuration time.Duration
}

// EffectCall is one invocation the host asks of an Effector.
type EffectCall struct {
	World   string
	Command string // the command's key
	Key     string // the effect's key
	Payload json.RawMessage
	// Epoch is the fence token: a downstream system that remembers the
	// highest epoch it saw per IdempotencyKey and refuses lower ones is
	// safe even against a paused holder.
	Epoch int64
	// Attempt counts the intents journaled for this effect (1 for the
	// first; more only after a resolution that it did not happen).
	Attempt int
	// IdempotencyKey is stable across holders and attempts.
	IdempotencyKey string
}

// Effector runs a world's side effects.
type Effector interface {
	// Invoke performs the effect once and returns its result (JSON, may be
	// empty). It must respect ctx's deadline.
	Invoke(ctx context.Context, c EffectCall) (json.RawMessage, error)
}

// Reconciler is an Effector that can tell, by idempotency key, whether an
// effect happened: the host then settles an uncertain effect by itself.
// The call carries the asking holder's epoch: the downstream must record it
// as the highest fence token seen for the key, so that a call of an earlier
// epoch still in flight (a holder whose lease an operator revoked while its
// own runway had not run out) is refused after the answer "not happened" —
// without that, the next attempt and the late call could both happen (the
// world model's effects variant with a revoke, model/README.md).
type Reconciler interface {
	Reconcile(ctx context.Context, c EffectCall) (happened bool, result json.RawMessage, err error)
}

// EffectOutcome is an effect's outcome as its command's turn records it
// and its Reply reports it.
type EffectOutcome struct {
	Key    string          `json:"k"`
	Result json.RawMessage `json:"r,omitempty"`
	Error  string          `json:"x,omitempty"`
}

// UncertainEffectError: the command's effect Key was started by an earlier
// holder whose turn was never journaled, so it may or may not have
// happened. The host will not invoke it again until it is resolved
// (Host.ResolveEffect, or a Reconciler). Nothing was applied. It matches
// lease.ErrUncertain.
type UncertainEffectError struct {
	World, Command, Key string
	Position            int64 // the intent's position
	Err                 error // why reconciling failed, if it was tried
}

func (e *UncertainEffectError) Error() string {
	s := fmt.Sprintf("world %s: command %q: effect %q started at position %d is uncertain", e.World, e.Command, e.Key, e.Position)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns lease.ErrUncertain.
func (e *UncertainEffectError) Unwrap() error { return lease.ErrUncertain }

// effectIntent is the payload of an EffectKind entry; effectResolved of an
// EffectResolvedKind one.
type effectIntent struct {
	Command string `json:"c"`
	Key     string `json:"k"`
	Attempt int    `json:"n"`
}

type effectResolved struct {
	Command  string          `json:"c"`
	Key      string          `json:"k"`
	Attempt  int             `json:"n"`
	Happened bool            `json:"happened"`
	Result   json.RawMessage `json:"r,omitempty"`
}

// effectID names (command, effect) in journal keys: a command key may be
// 256 bytes, so the pair is hashed.
func effectID(cmd, key string) string {
	sum := sha256.Sum256([]byte(cmd + "\x00" + key))
	return base64.RawURLEncoding.EncodeToString(sum[:18])
}

// intentKey names an intent by command, effect, attempt AND epoch. The
// epoch is in it because the store's key rule is checked before the lease
// rule: without it, a revoked holder's intent delayed in the network would
// land after the next holder journaled the same attempt's intent and be
// answered OK with that position — and the revoked holder, its runway not
// yet run out on its own clock, would invoke a second time (found by the
// world model's effects variant with an operator revoke, model/world.pml).
// With it, the delayed intent is a new key, checked against the lease, and
// refused.
func intentKey(cmd, key string, attempt int, epoch int64) string {
	return fmt.Sprintf("fx:%s:%d:%d", effectID(cmd, key), attempt, epoch)
}

func resolvedKey(cmd, key string, attempt int) string {
	return fmt.Sprintf("fr:%s:%d", effectID(cmd, key), attempt)
}

func idempotencyKey(world, cmd, key string) string { return world + "/" + effectID(cmd, key) }

// fxState is what a mirror knows of one effect of a command whose turn is
// not journaled yet.
type fxState struct {
	attempt  int   // intents journaled
	pending  bool  // the last intent is neither resolved nor ended by a turn
	pos      int64 // the last intent's position
	happened bool  // resolved: it happened, with result
	result   json.RawMessage
}

// foldEffect folds an EffectKind or EffectResolvedKind entry.
func (m *mirror) foldEffect(e *journal.Entry) error {
	switch e.Kind {
	case EffectKind:
		var in effectIntent
		if err := json.Unmarshal(e.Payload, &in); err != nil {
			return fmt.Errorf("effect intent at %d: %v: %w", e.Position, err, lease.ErrCorrupt)
		}
		s := m.fxOf(in.Command, in.Key)
		s.attempt, s.pending, s.pos, s.happened, s.result = in.Attempt, true, e.Position, false, nil
	case EffectResolvedKind:
		var r effectResolved
		if err := json.Unmarshal(e.Payload, &r); err != nil {
			return fmt.Errorf("effect resolution at %d: %v: %w", e.Position, err, lease.ErrCorrupt)
		}
		s := m.fxOf(r.Command, r.Key)
		s.pending, s.happened, s.result = false, r.Happened, r.Result
	}
	return nil
}

func (m *mirror) fxOf(cmd, key string) *fxState {
	if m.fx == nil {
		m.fx = map[string]map[string]*fxState{}
	}
	c := m.fx[cmd]
	if c == nil {
		c = map[string]*fxState{}
		m.fx[cmd] = c
	}
	s := c[key]
	if s == nil {
		s = &fxState{}
		c[key] = s
	}
	return s
}

// uncertain returns the command's effects whose intent is pending.
func (m *mirror) uncertain(cmd string) []string {
	var out []string
	for k, s := range m.fx[cmd] {
		if s.pending {
			out = append(out, k)
		}
	}
	return out
}

// validEffects checks a decision's effects against the timing.
func validEffects(fx []EffectRequest, t lease.Timing) error {
	most := t.Lease - t.Skew - t.Renew - t.Drain
	seen := map[string]bool{}
	for _, f := range fx {
		if err := journal.ValidateID("effect key", f.Key); err != nil {
			return err
		}
		if seen[f.Key] {
			return fmt.Errorf("effect %q twice in one decision: %w", f.Key, lease.ErrInvalid)
		}
		seen[f.Key] = true
		if f.MaxDuration <= 0 || f.MaxDuration > most {
			return fmt.Errorf("effect %q: max duration %s must be in (0, %s] (T_lease − S − T_renew − T_drain): %w",
				f.Key, f.MaxDuration, most, lease.ErrInvalid)
		}
		if len(f.Payload) > 0 && !json.Valid(f.Payload) {
			return fmt.Errorf("effect %q: payload is not JSON: %w", f.Key, lease.ErrInvalid)
		}
	}
	return nil
}
