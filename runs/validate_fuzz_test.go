package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// FuzzValidateEnqueue checks ValidateEnqueue against its rules stated
// independently: a queue of 1..MaxQueueBytes identifier characters, JSON
// of at most MaxPayloadBytes once compact, a priority in 0..MaxPriority, a
// delay in 0..MaxDelay, max attempts in 1..MaxAttemptsLimit (0 meaning
// DefaultAttempts), a unique key of at most MaxUniqueKeyBytes of UTF-8
// without control characters. A refusal is an *InputError (lease.ErrInvalid)
// naming the first field at fault; an accepted run has a compact payload
// and is accepted again unchanged (validation is idempotent).
func FuzzValidateEnqueue(f *testing.F) {
	f.Add("emails", []byte(` {"to" : "a@b"} `), 0, int64(0), 0, "")
	f.Add("a.b_c:d@e/f-g", []byte(`[1,2]`), MaxPriority, int64(MaxDelay), MaxAttemptsLimit, strings.Repeat("k", MaxUniqueKeyBytes))
	f.Add("q", []byte(nil), -1, int64(-1), -1, "\x00")
	f.Add("q", []byte(`{`), MaxPriority+1, int64(MaxDelay+1), MaxAttemptsLimit+1, strings.Repeat("k", MaxUniqueKeyBytes+1))
	f.Add("a b", []byte("\xff"), 0, int64(0), 1, "\xff")
	f.Add(strings.Repeat("q", MaxQueueBytes+1), []byte(`"\u2028"`), 7, int64(time.Second), 3, "é\u0085")
	f.Fuzz(func(t *testing.T, queue string, payload []byte, priority int, delay int64, attempts int, key string) {
		e := Enqueue{Queue: queue, Payload: payload, Priority: priority, Delay: time.Duration(delay), MaxAttempts: attempts, UniqueKey: key}
		err := ValidateEnqueue(&e)

		_, perr := journal.NormalizePayload(payload)
		field := ""
		switch {
		case !queueRule(queue):
			field = "queue"
		case perr != nil:
			field = "payload"
		case priority < 0 || priority > MaxPriority:
			field = "priority"
		case delay < 0 || time.Duration(delay) > MaxDelay:
			field = "delay"
		case attempts < 0 || attempts > MaxAttemptsLimit:
			field = "max_attempts"
		case !uniqueKeyRule(key):
			field = "unique_key"
		}
		if field != "" {
			var ie *journal.InputError
			require.True(t, errors.As(err, &ie), "want a refusal of %s, got %v", field, err)
			require.Equal(t, field, ie.Field, "%v", err)
			require.ErrorIs(t, err, lease.ErrInvalid)
			return
		}
		require.NoError(t, err)
		want := attempts
		if want == 0 {
			want = DefaultAttempts
		}
		require.Equal(t, want, e.MaxAttempts)
		require.LessOrEqual(t, len(e.Payload), MaxPayloadBytes)
		var compact bytes.Buffer
		if len(bytes.TrimSpace(payload)) == 0 {
			compact.WriteString("null")
		} else {
			require.NoError(t, json.Compact(&compact, payload))
		}
		require.Equal(t, compact.Bytes(), e.Payload)

		again := e
		require.NoError(t, ValidateEnqueue(&again), "an accepted run is refused on a second look")
		require.Equal(t, e, again)
	})
}

func queueRule(q string) bool {
	if len(q) == 0 || len(q) > MaxQueueBytes {
		return false
	}
	for i := 0; i < len(q); i++ {
		c := q[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._:@/-", c) >= 0) {
			return false
		}
	}
	return true
}

func uniqueKeyRule(k string) bool {
	return len(k) <= MaxUniqueKeyBytes && utf8.ValidString(k) &&
		!strings.ContainsFunc(k, func(r rune) bool { return r < 0x20 || r == 0x7f })
}
