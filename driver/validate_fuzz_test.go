package driver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// decodeEvents reads a batch from fuzz bytes: per event a run id, a fence
// and a seq byte (signed), then a length-prefixed kind and payload.
func decodeEvents(data []byte) []RunEventInsert {
	var evs []RunEventInsert
	field := func() []byte {
		if len(data) == 0 {
			return nil
		}
		n := min(int(data[0]), len(data)-1)
		v := data[1 : 1+n]
		data = data[1+n:]
		return v
	}
	for len(data) >= 3 {
		ev := RunEventInsert{RunID: int64(int8(data[0])), Fence: int64(int8(data[1])), Seq: int64(int8(data[2]))}
		data = data[3:]
		ev.Kind = string(field())
		if p := field(); len(p) > 0 {
			ev.Payload = p
		}
		evs = append(evs, ev)
	}
	return evs
}

// wantPayload is a payload's stored form: compact JSON, JSON null for none.
func wantPayload(t *testing.T, p []byte) []byte {
	if len(bytes.TrimSpace(p)) == 0 {
		return []byte("null")
	}
	var b bytes.Buffer
	require.NoError(t, json.Compact(&b, p))
	return b.Bytes()
}

// FuzzValidateEvents: a batch of run events is accepted exactly when every
// event has a positive run id, fence and seq, an identifier kind and a
// valid JSON payload (none counts as null); its payloads come back compact,
// the caller's batch untouched. One rule for every store (SPEC §5): it runs
// in Validating, above the drivers. A refusal is an *InputError
// (lease.ErrInvalid) naming the first bad event's index.
func FuzzValidateEvents(f *testing.F) {
	f.Add([]byte("\x01\x01\x01\x04step\x07{\"a\":1}\x01\x01\x02\x04done\x00"))
	f.Add([]byte("\x01\x01\x00\x01k\x00"))
	f.Add([]byte("\x01\x01\x01\x00\x00"))
	f.Add([]byte("\x01\x01\x01\x03a b\x00"))
	f.Add([]byte("\x01\xff\x01\x01k\x00"))
	f.Add([]byte("\x01\x01\x01\x01k\x02{,"))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs := decodeEvents(data)
		before := slices.Clone(evs)
		n, err := (&RunEventAppendParams{Events: evs}).normalized()
		require.Equal(t, before, evs)

		bad := -1
		for i, ev := range evs {
			_, perr := journal.NormalizePayload(ev.Payload)
			if ev.RunID <= 0 || ev.Fence <= 0 || ev.Seq <= 0 || journal.ValidateID("kind", ev.Kind) != nil || perr != nil {
				bad = i
				break
			}
		}
		if bad >= 0 {
			var ie *journal.InputError
			require.True(t, errors.As(err, &ie), "%v", err)
			require.ErrorIs(t, err, lease.ErrInvalid)
			require.Contains(t, err.Error(), fmt.Sprintf("event %d of the batch", bad))
			return
		}
		require.NoError(t, err)
		require.Len(t, n.Events, len(evs))
		for i, ev := range evs {
			ev.Payload = wantPayload(t, ev.Payload)
			require.Equal(t, ev, n.Events[i])
		}
	})
}

// FuzzValidateEffect: an effect is accepted exactly when its run id and
// fence are positive and its key is 1..journal.MaxKeyBytes of UTF-8
// without control characters; a result is stored as nil (NULL) when none
// is given, else compact JSON, and refused with lease.ErrInvalid when it is
// not JSON.
func FuzzValidateEffect(f *testing.F) {
	f.Add(int64(1), int64(1), "charge-card", []byte(`{"id": "ch_1"}`))
	f.Add(int64(0), int64(1), "", []byte(nil))
	f.Add(int64(1), int64(-1), "\x00", []byte(" "))
	f.Add(int64(1), int64(1), strings.Repeat("k", journal.MaxKeyBytes+1), []byte("{"))
	f.Add(int64(1), int64(1), "\xff", []byte("\xff"))
	f.Fuzz(func(t *testing.T, id, fence int64, key string, result []byte) {
		err := validateEffect(id, fence, key)
		ok := id > 0 && fence > 0 && key != "" && len(key) <= journal.MaxKeyBytes && utf8.ValidString(key) &&
			!strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f })
		require.Equal(t, ok, err == nil, "validateEffect(%d, %d, %q) = %v", id, fence, key, err)
		if err != nil {
			require.ErrorIs(t, err, lease.ErrInvalid)
		}

		r, err := normalizeResult(result)
		switch _, perr := journal.NormalizePayload(result); {
		case len(result) == 0:
			require.NoError(t, err)
			require.Nil(t, r)
		case perr != nil:
			require.ErrorIs(t, err, lease.ErrInvalid)
		default:
			require.NoError(t, err)
			require.Equal(t, wantPayload(t, result), r)
		}
	})
}
