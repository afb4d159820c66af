package host

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBandRules: the pure band decision — sustain before a spill, clear
// before a handback, and hysteresis: a load between the exit and the entry
// thresholds neither spills a world nor brings it home.
func TestBandRules(t *testing.T) {
	b := &Band{TurnsPerSecond: 100, Sustain: 10 * time.Second, Clear: time.Minute, Spill: []string{"home", "spill-1"}}
	b.withDefaults()
	t0 := time.Unix(0, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	hot, warm, cool := Load{TurnsPerSecond: 150}, Load{TurnsPerSecond: 70}, Load{TurnsPerSecond: 20}

	// On its home: above for less than Sustain does nothing; a dip resets.
	s, mv := decideBand(b, bandState{}, hot, at(0), "home", "home", true)
	require.Nil(t, mv)
	s, mv = decideBand(b, s, hot, at(9), "home", "home", true)
	require.Nil(t, mv)
	s, mv = decideBand(b, s, warm, at(10), "home", "home", true) // at 70%: not above, resets
	require.Nil(t, mv)
	require.True(t, s.since.IsZero())
	s, _ = decideBand(b, s, hot, at(11), "home", "home", true)
	s, mv = decideBand(b, s, hot, at(21), "home", "home", true)
	require.NotNil(t, mv)
	require.Equal(t, "spill", mv.State)
	require.Equal(t, "spill-1", mv.To, "never itself")
	require.Contains(t, mv.Reason, "turns/s 150 > 100")

	// On the spill node: warm (between 50% and 100%) never brings it home.
	s = bandState{}
	for i := 0; i <= 120; i += 10 {
		s, mv = decideBand(b, s, warm, at(i), "spill-1", "home", false)
		require.Nil(t, mv, "hysteresis at %ds", i)
	}
	// Cool for Clear brings it home; a warm blip restarts the clock.
	s, _ = decideBand(b, bandState{}, cool, at(0), "spill-1", "home", false)
	s, _ = decideBand(b, s, warm, at(30), "spill-1", "home", false)
	s, _ = decideBand(b, s, cool, at(31), "spill-1", "home", false)
	s, mv = decideBand(b, s, cool, at(90), "spill-1", "home", false)
	require.Nil(t, mv, "only 59s since the blip")
	_, mv = decideBand(b, s, cool, at(91), "spill-1", "home", false)
	require.NotNil(t, mv)
	require.Equal(t, "home", mv.State)
	require.Equal(t, "home", mv.To)
}
