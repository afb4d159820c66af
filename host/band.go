package host

import (
	"context"
	"fmt"
	"time"
)

// Band is the hot-world policy (SPEC §4): a world whose load stays above
// the entry thresholds for Sustain spills from its home to a node of
// Spill; a spilled world whose load stays below the exit thresholds for
// Clear is handed back home. The exit thresholds are the entry ones times
// ExitRatio (< 1), so a world hovering at the threshold does not flap.
// Every transition is journaled by the holder as a host.band entry with
// its reason and the load that triggered it, as its last act before the
// handoff, and counted in the host's Stats.
type Band struct {
	// TurnsPerSecond and InboxDepth are the entry thresholds; a zero one
	// is not judged. Both zero disables the band.
	TurnsPerSecond float64
	InboxDepth     int
	// Sustain is how long the load must stay above before a spill.
	// Defaults to 10 s.
	Sustain time.Duration
	// Clear is how long the load must stay below the exit thresholds
	// before a handback. Defaults to 1 h.
	Clear time.Duration
	// ExitRatio scales the entry thresholds into the exit ones. Defaults
	// to 0.5.
	ExitRatio float64
	// Window is the load measurement window. Defaults to 1 s.
	Window time.Duration
	// Spill is the pool of nodes a hot world may spill to; the first one
	// that is not this host is chosen.
	Spill []string
	// Mover reaches the receiving host of a move: it must look at the
	// world before the handoff lands (Host.Acquire's ABA rule) and acquire
	// it after. A Router over the hosts is one. Required when the band is
	// enabled.
	Mover Mover
}

// Mover reaches another host for a move (Router is one).
type Mover interface {
	// PrepareOn has node look at the world and warm its mirror.
	PrepareOn(ctx context.Context, world, node string) error
	// AcquireOn has node acquire the world handed to it.
	AcquireOn(ctx context.Context, world, node string) error
}

func (b *Band) enabled() bool { return b != nil && (b.TurnsPerSecond > 0 || b.InboxDepth > 0) }

func (b *Band) withDefaults() {
	if b.Sustain <= 0 {
		b.Sustain = 10 * time.Second
	}
	if b.Clear <= 0 {
		b.Clear = time.Hour
	}
	if b.ExitRatio <= 0 || b.ExitRatio >= 1 {
		b.ExitRatio = 0.5
	}
	if b.Window <= 0 {
		b.Window = time.Second
	}
}

// above reports whether ld is over an entry threshold, and which.
func (b *Band) above(ld Load) (string, bool) {
	switch {
	case b.TurnsPerSecond > 0 && ld.TurnsPerSecond > b.TurnsPerSecond:
		return fmt.Sprintf("turns/s %.0f > %.0f", ld.TurnsPerSecond, b.TurnsPerSecond), true
	case b.InboxDepth > 0 && ld.InboxDepth > b.InboxDepth:
		return fmt.Sprintf("inbox depth %d > %d", ld.InboxDepth, b.InboxDepth), true
	}
	return "", false
}

// below reports whether ld is under every exit threshold.
func (b *Band) below(ld Load) bool {
	if b.TurnsPerSecond > 0 && ld.TurnsPerSecond >= b.TurnsPerSecond*b.ExitRatio {
		return false
	}
	if b.InboxDepth > 0 && float64(ld.InboxDepth) >= float64(b.InboxDepth)*b.ExitRatio {
		return false
	}
	return true
}

// bandState is one held world's band judgement: since when its load has
// been continuously above (on its home) or below (on a spill node).
type bandState struct {
	since time.Time // zero: the condition does not hold now
}

// bandMove is a transition the band decided: journal it, then move.
type bandMove struct {
	State  string `json:"state"` // "spill" or "home"
	To     string `json:"to"`
	Reason string `json:"reason"`
	Load   Load   `json:"load"`
}

// decideBand is the band's pure rule for one measurement: the move to
// make, if any, and the next state. onHome: this host is the world's home.
func decideBand(b *Band, s bandState, ld Load, now time.Time, me, home string, onHome bool) (bandState, *bandMove) {
	var cond bool
	var why string
	if onHome {
		why, cond = b.above(ld)
	} else {
		cond = b.below(ld)
	}
	if !cond {
		return bandState{}, nil
	}
	if s.since.IsZero() {
		return bandState{since: now}, nil
	}
	held := now.Sub(s.since)
	if onHome && held >= b.Sustain {
		for _, n := range b.Spill {
			if n != me {
				return bandState{}, &bandMove{State: "spill", To: n, Load: ld,
					Reason: fmt.Sprintf("%s for %s (sustain %s)", why, held.Round(time.Millisecond), b.Sustain)}
			}
		}
		return s, nil // no spill node other than this one
	}
	if !onHome && held >= b.Clear && home != "" && home != me {
		return bandState{}, &bandMove{State: "home", To: home, Load: ld,
			Reason: fmt.Sprintf("below %.0f%% of the entry thresholds for %s (clear %s)", b.ExitRatio*100, held.Round(time.Millisecond), b.Clear)}
	}
	return s, nil
}
