package lease

import "time"

// Timing holds a lease's timing parameters. A zero field means "use the
// default" (see WithDefaults); run Validate on the result before use.
type Timing struct {
	// Lease is T_lease, the lease term: how far past the send of a write
	// the store sets the expiry. Defaults to 90s for runs, 30s for worlds.
	Lease time.Duration
	// Renew is T_renew, how often a live holder advances its wanted expiry
	// in memory. Defaults to 15s for runs, 5s for worlds.
	Renew time.Duration
	// Drain is T_drain, the write-behind flush period (one drain per
	// resource kind per process). Defaults to 5s for runs, 1s for worlds.
	Drain time.Duration
	// Stop is D_stop, the durable lag after which a holder stops itself.
	// Defaults to 45s for runs, 15s for worlds.
	Stop time.Duration
	// Skew is S, the bound on the store clock's forward error within one
	// term; runway is shortened by it. Defaults to 15s for runs, 5s for
	// worlds.
	Skew time.Duration
	// Poll is P, the reclaim / expiry poll period. Defaults to 1s.
	Poll time.Duration
	// Margin is the side-effect gate's margin, added to an effect's
	// declared maximum duration. Defaults to Drain: a flush period of slack
	// covers the time between the gate's check and the effect's start.
	Margin time.Duration
}

// RunDefaults returns the default timing for runs.
func RunDefaults() Timing {
	return Timing{
		Lease:  90 * time.Second,
		Renew:  15 * time.Second,
		Drain:  5 * time.Second,
		Stop:   45 * time.Second,
		Skew:   15 * time.Second,
		Poll:   time.Second,
		Margin: 5 * time.Second,
	}
}

// WorldDefaults returns the default timing for worlds.
func WorldDefaults() Timing {
	return Timing{
		Lease:  30 * time.Second,
		Renew:  5 * time.Second,
		Drain:  time.Second,
		Stop:   15 * time.Second,
		Skew:   5 * time.Second,
		Poll:   time.Second,
		Margin: time.Second,
	}
}

// WithDefaults returns t with every zero field taken from d. Only zero means
// unset: a negative value is kept so that Validate reports it.
//
// A zero Margin follows the drain period: t's own Drain if t set one, since
// a margin of d's drain period would not match the drain the caller chose;
// otherwise d's Margin; otherwise the resulting Drain.
func (t Timing) WithDefaults(d Timing) Timing {
	out := Timing{
		Lease: orDefault(t.Lease, d.Lease),
		Renew: orDefault(t.Renew, d.Renew),
		Drain: orDefault(t.Drain, d.Drain),
		Stop:  orDefault(t.Stop, d.Stop),
		Skew:  orDefault(t.Skew, d.Skew),
		Poll:  orDefault(t.Poll, d.Poll),
	}
	switch {
	case t.Margin != 0:
		out.Margin = t.Margin
	case t.Drain != 0:
		out.Margin = t.Drain
	case d.Margin != 0:
		out.Margin = d.Margin
	default:
		out.Margin = out.Drain
	}
	return out
}

func orDefault(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}
