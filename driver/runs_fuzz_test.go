package driver_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// fuzzID maps a fuzz byte to a run id or fence: small values (so a batch
// repeats ids), zero, negatives and the extremes.
func fuzzID(b byte) int64 {
	switch b {
	case 0x7f:
		return math.MaxInt64
	case 0x80:
		return math.MinInt64
	}
	return int64(int8(b))
}

// decodeCompletions reads a batch from fuzz bytes: per completion an id
// byte, a fence byte, a result length byte and that many result bytes.
func decodeCompletions(data []byte) []driver.RunCompletion {
	var cs []driver.RunCompletion
	for len(data) >= 3 {
		c := driver.RunCompletion{ID: fuzzID(data[0]), Fence: fuzzID(data[1])}
		n := min(int(data[2]), len(data)-3)
		if n > 0 {
			c.Result = data[3 : 3+n]
		}
		cs = append(cs, c)
		data = data[3+n:]
	}
	return cs
}

// requireInputError checks a refusal: an *InputError matching
// lease.ErrInvalid whose message contains want.
func requireInputError(t *testing.T, err error, want string) {
	t.Helper()
	var ie *journal.InputError
	require.True(t, errors.As(err, &ie), "not an *InputError: %v", err)
	require.ErrorIs(t, err, lease.ErrInvalid)
	require.Contains(t, err.Error(), want)
}

// FuzzValidateRunCompleteMany: a batch is accepted exactly when every
// completion names a positive id and fence, carries no result or valid
// JSON, and no run appears twice; then each result comes back compact (nil
// where none was given) and the batch itself is untouched. A refusal is an
// *InputError (lease.ErrInvalid) naming the first bad completion's index.
func FuzzValidateRunCompleteMany(f *testing.F) {
	f.Add([]byte("\x01\x01\x00\x02\x01\x02{}\x03\x05\x05[1, 2]"))
	f.Add([]byte("\x01\x01\x00\x01\x02\x00"))
	f.Add([]byte("\x01\x00\x00"))
	f.Add([]byte("\xff\x01\x00"))
	f.Add([]byte("\x7f\x7f\x01 \x80\x01\x00"))
	f.Add([]byte("\x01\x01\x02{,"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs := decodeCompletions(data)
		before := slices.Clone(cs)
		results, err := driver.ValidateRunCompleteMany(cs)
		require.Equal(t, before, cs, "the batch was modified")

		// The first problem, in the order the batch is read.
		problem := ""
		seen := map[int64]int{}
		for i, c := range cs {
			_, perr := runs.NormalizePayload("result", c.Result)
			switch {
			case c.ID <= 0 || c.Fence <= 0:
				problem = fmt.Sprintf("completion %d of the batch", i)
			case len(c.Result) > 0 && perr != nil:
				problem = fmt.Sprintf("completion %d of the batch", i)
			default:
				if j, dup := seen[c.ID]; dup {
					problem = fmt.Sprintf("completions %d and %d", j, i)
				}
				seen[c.ID] = i
			}
			if problem != "" {
				break
			}
		}
		// Each completion alone (ValidateRunCompletion, the worker's
		// completer checks one at a time): refused exactly when its id,
		// fence or result is, else normalized as the batch normalizes it.
		singles := make([][]byte, len(cs))
		for i := range cs {
			c := cs[i]
			_, perr := runs.NormalizePayload("result", c.Result)
			r, err := driver.ValidateRunCompletion(&c)
			require.Equal(t, cs[i], c, "the completion was modified")
			if c.ID <= 0 || c.Fence <= 0 || (len(c.Result) > 0 && perr != nil) {
				var ie *journal.InputError
				require.ErrorAs(t, err, &ie)
				continue
			}
			require.NoError(t, err)
			singles[i] = r
		}
		if len(cs) > driver.MaxRunCompleteBatch {
			problem = "over the limit"
		}
		if problem != "" {
			require.Nil(t, results)
			requireInputError(t, err, problem)
			return
		}
		require.NoError(t, err)
		require.Len(t, results, len(cs))
		for i, c := range cs {
			if len(c.Result) == 0 {
				require.Nil(t, results[i])
				continue
			}
			want := []byte("null") // a blank result is stored as JSON null
			if len(bytes.TrimSpace(c.Result)) > 0 {
				var compact bytes.Buffer
				require.NoError(t, json.Compact(&compact, c.Result))
				want = compact.Bytes()
			}
			require.Equal(t, want, results[i])
			require.Equal(t, results[i], singles[i], "completion %d alone", i)
			require.LessOrEqual(t, len(results[i]), runs.MaxPayloadBytes)
		}
	})
}

// FuzzValidateRunRenewMany: a drain is accepted exactly when its owner is a
// valid identifier, its lease is in (0, runs.MaxLease], and every ref names
// a positive id and fence with no run twice. A refusal is an *InputError
// (lease.ErrInvalid) naming the first bad ref's index.
func FuzzValidateRunRenewMany(f *testing.F) {
	f.Add("worker-1", int64(90*time.Second), []byte("\x01\x01\x02\x01\x03\x07"))
	f.Add("worker-1", int64(runs.MaxLease), []byte("\x01\x01\x01\x02"))
	f.Add("worker-1", int64(runs.MaxLease+1), []byte(""))
	f.Add("", int64(time.Second), []byte("\x01\x01"))
	f.Add("w 1", int64(time.Second), []byte("\x01\x01"))
	f.Add("w", int64(0), []byte("\x00\x01"))
	f.Add("w", int64(1), []byte("\x7f\x80"))
	f.Fuzz(func(t *testing.T, owner string, leaseNS int64, data []byte) {
		p := &driver.RunRenewManyParams{Owner: owner, Lease: time.Duration(leaseNS)}
		for i := 0; i+1 < len(data); i += 2 {
			p.Runs = append(p.Runs, driver.RunLeaseRef{ID: fuzzID(data[i]), Fence: fuzzID(data[i+1])})
		}
		before := slices.Clone(p.Runs)
		err := driver.ValidateRunRenewMany(p)
		require.Equal(t, before, p.Runs)

		problem := ""
		switch {
		case journal.ValidateID("owner", owner) != nil:
			problem = "owner"
		case p.Lease <= 0 || p.Lease > runs.MaxLease:
			problem = "lease"
		case len(p.Runs) > driver.MaxRunRenewBatch:
			problem = "over the limit"
		default:
			seen := map[int64]int{}
			for i, r := range p.Runs {
				if r.ID <= 0 || r.Fence <= 0 {
					problem = fmt.Sprintf("renewal %d of the batch", i)
					break
				}
				if j, dup := seen[r.ID]; dup {
					problem = fmt.Sprintf("renewals %d and %d", j, i)
					break
				}
				seen[r.ID] = i
			}
		}
		if problem == "" {
			require.NoError(t, err)
			return
		}
		requireInputError(t, err, problem)
	})
}

// FuzzValidateRunWrite: a fenced write's identity and reason are accepted
// exactly when id and fence are positive and the reason is at most
// runs.MaxReasonBytes of valid UTF-8 without NUL; ValidateRead accepts exactly a valid
// world, a position from 1 and a limit in 0..100000. Refusals are
// *InputErrors (lease.ErrInvalid).
func FuzzValidateRunWrite(f *testing.F) {
	f.Add(int64(1), int64(1), "handler failed", "w1", int64(1), 0)
	f.Add(int64(0), int64(1), "", "", int64(0), -1)
	f.Add(int64(1), int64(-1), "\xff", "w 1", int64(-5), 100001)
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), strings.Repeat("r", runs.MaxReasonBytes), "w", int64(math.MaxInt64), 100000)
	f.Add(int64(1), int64(1), strings.Repeat("é", runs.MaxReasonBytes/2+1), "w", int64(1), 1)
	f.Fuzz(func(t *testing.T, id, fence int64, reason, world string, from int64, limit int) {
		err := driver.ValidateRunWrite(id, fence, reason)
		ok := id > 0 && fence > 0 && len(reason) <= runs.MaxReasonBytes && utf8.ValidString(reason) && !strings.Contains(reason, "\x00")
		require.Equal(t, ok, err == nil, "ValidateRunWrite(%d, %d, %q) = %v", id, fence, reason, err)
		if err != nil {
			requireInputError(t, err, "")
		}

		err = driver.ValidateRead(&driver.JournalReadParams{World: world, From: from, Limit: limit})
		ok = journal.ValidateID("world", world) == nil && from >= 1 && limit >= 0 && limit <= 100000
		require.Equal(t, ok, err == nil, "ValidateRead(%q, %d, %d) = %v", world, from, limit, err)
		if err != nil {
			requireInputError(t, err, "")
		}
	})
}
