package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/journal"
)

// faultyStore is the real store with two one-shot faults: an append that
// commits and then answers an error (the outcome lost on the way back),
// and a journal read that fails.
type faultyStore struct {
	driver.Driver
	mu         sync.Mutex
	lostAppend bool
	failRead   int // > 0: the failRead-th read from now fails
}

var errInjected = errors.New("injected: connection lost")

func (f *faultyStore) JournalAppend(ctx context.Context, p *driver.JournalAppendParams) ([]journal.AppendOutcome, error) {
	out, err := f.Driver.JournalAppend(ctx, p)
	f.mu.Lock()
	lost := f.lostAppend
	f.lostAppend = false
	f.mu.Unlock()
	if lost && err == nil {
		return nil, errInjected
	}
	return out, err
}

func (f *faultyStore) JournalRead(ctx context.Context, p *driver.JournalReadParams) ([]journal.Entry, error) {
	f.mu.Lock()
	fail := f.failRead == 1
	if f.failRead > 0 {
		f.failRead--
	}
	f.mu.Unlock()
	if fail {
		return nil, errInjected
	}
	return f.Driver.JournalRead(ctx, p)
}

// TestARebuildThatFailsIsRebuiltAgain: a turn whose append's outcome was
// lost leaves the mirror to rebuild from the journal; when that rebuild's
// read fails too, the mirror must still count as not caught up. (It did
// not: the rebuild had already forgotten everything and cleared the flag,
// so the next command was decided on an empty state, and its landing
// moved the mirror past entries it never folded — in the simulator, seed
// 80 with another schedule, a command applied and its payout made twice.)
func TestARebuildThatFailsIsRebuiltAgain(t *testing.T) {
	f := &faultyStore{Driver: openSQLite(t)}
	h := newHost(t, f, "home-1", programs.Bank{}, func(c *host.Config) { c.SnapshotEvery = 1 })
	ctx := context.Background()
	require.NoError(t, h.Create(ctx, "w"))
	deposit := func(key string, n int) (host.Reply, error) {
		return h.Submit(ctx, "w", host.Command{Key: key, Payload: json.RawMessage(`{"op":"deposit","account":"a","amount":` + string(rune('0'+n)) + `}`)})
	}
	_, err := deposit("c1", 5)
	require.NoError(t, err)
	for i := 0; h.Stats().SnapshotsTaken < 1; i++ { // the snapshot through c1, put off the loop
		require.Less(t, i, 1_000_000, "no snapshot was taken")
		runtime.Gosched()
	}

	f.mu.Lock()
	f.lostAppend = true
	f.mu.Unlock()
	_, err = deposit("c2", 5) // journaled; the host hears an error
	var uo *host.UnknownOutcomeError
	require.ErrorAs(t, err, &uo)

	f.mu.Lock()
	f.failRead = 2 // the rebuild restores the snapshot (reading its entry), then its tail read fails
	f.mu.Unlock()
	_, err = deposit("c3", 1) // c3 is not decided
	require.ErrorAs(t, err, &uo)

	r, err := deposit("c4", 1) // decided on the journal's state: a = 5 + 5 + 1
	require.NoError(t, err)
	var br programs.BankReply
	require.NoError(t, json.Unmarshal(r.Payload, &br))
	require.Equal(t, int64(11), br.Balance, "c4 was decided on a mirror that had not replayed c2")

	r, err = deposit("c2", 5) // the retry of c2 is its first answer, not a second deposit
	require.NoError(t, err)
	require.True(t, r.Duplicate)
	r, err = h.Submit(ctx, "w", host.Command{Key: "b", Payload: json.RawMessage(`{"op":"balance","account":"a"}`)})
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(r.Payload, &br))
	require.Equal(t, int64(11), br.Balance)
}
