package keeper

import (
	"fmt"

	"github.com/leasehold/leasehold/journal"
)

// Mode is the heartbeat mode (SPEC §2). The zero Mode is ModeWriteBehind.
type Mode int32

const (
	// ModeWriteBehind: renewals are in-memory and the drain flushes them;
	// the drain's confirmations are the gate's evidence.
	ModeWriteBehind Mode = iota
	// ModeDark: the synchronous renewals stay authoritative and enforced;
	// the drain also runs, and each gate and self-stop decision is also
	// computed from its confirmations, differences counted, not enforced.
	ModeDark
	// ModeSync: every renewal is a synchronous fenced UPDATE made by the
	// holder (the baseline); the drain issues nothing.
	ModeSync
)

func (m Mode) String() string {
	switch m {
	case ModeWriteBehind:
		return "writebehind"
	case ModeDark:
		return "dark"
	case ModeSync:
		return "sync"
	}
	return fmt.Sprintf("Mode(%d)", int32(m))
}

// ParseMode parses "sync", "dark" or "writebehind".
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{ModeSync, ModeDark, ModeWriteBehind} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, &journal.InputError{Field: "mode", Problem: fmt.Sprintf("%q is not one of sync, dark, writebehind", s)}
}

// SyncRenews reports whether the holder makes synchronous renewals in m.
func (m Mode) SyncRenews() bool { return m != ModeWriteBehind }

// Drains reports whether the drain issues statements in m.
func (m Mode) Drains() bool { return m != ModeSync }

// valid reports whether m is one of the three modes.
func (m Mode) valid() bool { return m >= ModeWriteBehind && m <= ModeSync }
