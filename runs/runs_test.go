package runs

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

func TestValidateEnqueueDefaultsAndLimits(t *testing.T) {
	t.Parallel()
	e := Enqueue{Queue: "emails", Payload: []byte(` {"to" : "a@b"} `)}
	require.NoError(t, ValidateEnqueue(&e))
	require.Equal(t, `{"to":"a@b"}`, string(e.Payload))
	require.Equal(t, DefaultAttempts, e.MaxAttempts)

	for name, bad := range map[string]Enqueue{
		"queue":     {Queue: "a b"},
		"payload":   {Queue: "q", Payload: []byte(`{`)},
		"oversized": {Queue: "q", Payload: []byte(`"` + strings.Repeat("x", MaxPayloadBytes) + `"`)},
		"priority":  {Queue: "q", Priority: MaxPriority + 1},
		"delay":     {Queue: "q", Delay: -1},
		"attempts":  {Queue: "q", MaxAttempts: -2},
		"key":       {Queue: "q", UniqueKey: "a\nb"},
	} {
		err := ValidateEnqueue(&bad)
		require.ErrorIs(t, err, lease.ErrInvalid, name)
		var ie *journal.InputError
		require.True(t, errors.As(err, &ie), name)
	}
}

func TestBackoffGrowsCapsAndJitters(t *testing.T) {
	t.Parallel()
	b := Backoff{Base: time.Second, Max: time.Minute, Jitter: 0.5}
	require.Equal(t, time.Second, b.Delay(1, 0.5), "u = 0.5 is the unjittered delay")
	require.Equal(t, 2*time.Second, b.Delay(2, 0.5))
	require.Equal(t, 8*time.Second, b.Delay(4, 0.5))
	require.Equal(t, time.Minute, b.Delay(50, 0.5), "capped")
	require.Equal(t, time.Minute, b.Delay(math.MaxInt, 0.5), "no overflow on absurd attempts")
	require.Equal(t, 6*time.Second, b.Delay(4, 0), "-Jitter/2")
	require.Equal(t, 10*time.Second, b.Delay(4, 1), "+Jitter/2")
	require.GreaterOrEqual(t, Backoff{}.Delay(1, 0), time.Duration(0))
}

func TestStates(t *testing.T) {
	t.Parallel()
	for _, s := range []State{StateCompleted, StateFailed, StateCancelled} {
		require.True(t, s.Final())
	}
	for _, s := range []State{StateAvailable, StateRunning, StateBlocked} {
		require.False(t, s.Final())
		require.True(t, s.Valid())
	}
	require.False(t, State("paused").Valid())
}
