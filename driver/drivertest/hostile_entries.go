package drivertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// hostileEntry is one entry point of the driver and the field of it the
// corpus of one kind is driven into.
type hostileEntry struct {
	name   string // "RunEnqueue.queue"
	kind   string // the corpus: string, json, int, count, duration, time
	values func() []hostileValue
	// prepare sets up what the call needs (before the fingerprint is
	// taken) and returns it.
	prepare func(x *hx, v any) hostileCall
	// roundTrip: after all values, every world must survive export →
	// audit → import.
	roundTrip bool
}

// hostileCall is one prepared call: call makes it; check, after an
// acceptance, reads the value back and says how it differs.
type hostileCall struct {
	call  func() error
	check func() error
}

// hx is the env of one entry point's calls; n numbers the call, so each
// gets its own queue and world and no call sees another's rows.
type hx struct {
	*env
	n          int
	headBefore int64 // the call's world's head position before the call (0: none)
}

func (x *hx) queue() string { return fmt.Sprintf("q%d", x.n) }
func (x *hx) world() string { return fmt.Sprintf("w%d", x.n) }

// held enqueues a run in the call's queue and claims it, for owner when
// the rules let it claim, else for "a".
func (x *hx) held(owner string) *driver.Run {
	x.t.Helper()
	x.enqueue(runs.Enqueue{Queue: x.queue()})
	got, err := x.runStore().RunClaim(x.ctx, &driver.RunClaimParams{Queue: x.queue(), Owner: owner, Limit: 1, Lease: runLease})
	if err != nil {
		got = x.claim(x.queue(), "a", 1)
	}
	require.Len(x.t, got, 1)
	return got[0]
}

func (x *hx) runNow(id int64) (*driver.Run, error) {
	return x.runStore().RunGet(x.ctx, &driver.RunGetParams{ID: id})
}

// jsonSpace is JSON's own whitespace (RFC 8259 §2), nothing else.
const jsonSpace = " \t\r\n"

// compactOf is the form a JSON value must read back in: compact, and
// empty (nothing but JSON whitespace) as empty says. It is computed
// without the library's rule, with encoding/json alone; nil if v is not
// JSON (then nothing may have been accepted).
func compactOf(v, empty []byte) []byte {
	if len(bytes.Trim(v, jsonSpace)) == 0 {
		return empty
	}
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return nil
	}
	return b.Bytes()
}

func sameBytes(what string, got, want []byte) error {
	if want == nil && got != nil || !bytes.Equal(got, want) {
		return fmt.Errorf("%s reads back %q, want %q", what, clip(got), clip(want))
	}
	return nil
}

func sameString(what, got, want string) error {
	if got != want {
		return fmt.Errorf("%s reads back %q, want %q", what, clip([]byte(got)), clip([]byte(want)))
	}
	return nil
}

// sameTime compares a derived store time within the store's resolution.
func sameTime(what string, got, want time.Time) error {
	if d := got.Sub(want); d < -journal.StoreTimeResolution || d > journal.StoreTimeResolution {
		return fmt.Errorf("%s reads back %s, want %s", what, got, want)
	}
	return nil
}

func clip(b []byte) []byte {
	if len(b) > 80 {
		return append(b[:80:80], "…"...)
	}
	return b
}

func ignore[T any](_ T, err error) error { return err }

// hostileEntries are the entry points the corpus is driven into: every
// field of every driver call that takes a string, JSON, an integer, a
// batch size, a duration or a time from a caller.
func hostileEntries() []hostileEntry {
	runBatch, worldBatch := batchEntries()
	all := append(runStringEntries(), runValueEntries()...)
	all = append(all, runBatch...)
	all = append(all, homeEntries()...)
	all = append(all, keyEntries()...)
	all = append(all, snapshotEntries()...)
	all = append(all, renewEntries()...)
	all = append(all, enqueueTxEntries()...)
	all = append(all, queueEntries()...)
	return append(all, append(worldEntries(), worldRoundTrip(worldBatch)...)...)
}
