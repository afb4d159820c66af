package drivertest

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// inputCases hold the store to SPEC §5 "Bad input": validated once, above
// the driver (driver.Validating), so every store refuses the same input
// with the same typed error and changes nothing.
var inputCases = []Case{
	{"BadInputRefusedAlike", caseBadInputRefusedAlike},
	{"EmptyBatchesAnsweredAlike", caseEmptyBatchesAnsweredAlike},
}

func caseBadInputRefusedAlike(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("w", "home")
	r := e.enqueue(runs.Enqueue{Queue: "q"})[0].Run
	held := e.claim("q", "a", 1)[0]
	rs, es := e.runStore(), e.effects()
	bad := "bad\x00\xff"
	calls := map[string]func() error{
		"world get":  func() error { _, err := e.d.WorldGet(e.ctx, &driver.WorldGetParams{World: bad}); return err },
		"world list": func() error { _, err := e.d.WorldList(e.ctx, &driver.WorldListParams{After: bad}); return err },
		"world list home": func() error {
			_, err := e.d.WorldList(e.ctx, &driver.WorldListParams{Home: bad})
			return err
		},
		"world create": func() error {
			_, err := e.d.WorldCreate(e.ctx, &driver.WorldCreateParams{World: bad, Home: "h", Term: term})
			return err
		},
		"lease change": func() error {
			_, err := e.d.LeaseChange(e.ctx, &driver.LeaseChangeParams{World: bad, Op: "revoke", Plan: nil})
			return err
		},
		"journal read": func() error {
			_, err := e.d.JournalRead(e.ctx, &driver.JournalReadParams{World: "w", From: 0})
			return err
		},
		"journal read limit": func() error {
			_, err := e.d.JournalRead(e.ctx, &driver.JournalReadParams{World: "w", From: 1, Limit: -1})
			return err
		},
		"event list limit": func() error {
			_, err := es.RunEventList(e.ctx, &driver.RunEventListParams{RunID: held.ID, Limit: -1})
			return err
		},
		"journal append": func() error { _, err := e.d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: bad}); return err },
		"journal import": func() error { _, err := e.d.JournalImport(e.ctx, &driver.JournalImportParams{}); return err },
		"enqueue": func() error {
			_, err := rs.RunEnqueue(e.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}, {Queue: bad}}})
			return err
		},
		"get": func() error { _, err := rs.RunGet(e.ctx, &driver.RunGetParams{ID: 0}); return err },
		"claim": func() error {
			_, err := rs.RunClaim(e.ctx, &driver.RunClaimParams{Queue: "q", Owner: bad, Limit: 1, Lease: runLease})
			return err
		},
		"renew": func() error {
			_, err := rs.RunRenew(e.ctx, &driver.RunRenewParams{ID: held.ID, Fence: held.Fence, Owner: "a"})
			return err
		},
		"renew many": func() error {
			_, err := rs.RunRenewMany(e.ctx, &driver.RunRenewManyParams{Owner: "a", Lease: runLease, Runs: []driver.RunLeaseRef{{ID: held.ID, Fence: held.Fence}, {ID: held.ID, Fence: held.Fence}}})
			return err
		},
		"complete": func() error {
			_, err := rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: held.ID, Fence: held.Fence, Result: []byte("not json")})
			return err
		},
		"complete many": func() error {
			_, err := rs.RunCompleteMany(e.ctx, &driver.RunCompleteManyParams{Runs: []driver.RunCompletion{{ID: held.ID, Fence: held.Fence, Result: []byte("{")}}})
			return err
		},
		"fail": func() error {
			_, err := rs.RunFail(e.ctx, &driver.RunFailParams{ID: held.ID, Fence: held.Fence, Reason: bad})
			return err
		},
		"block":   func() error { _, err := rs.RunBlock(e.ctx, &driver.RunBlockParams{ID: held.ID, Fence: 0}); return err },
		"unblock": func() error { _, err := rs.RunUnblock(e.ctx, &driver.RunUnblockParams{ID: -1}); return err },
		"cancel": func() error {
			_, err := rs.RunCancel(e.ctx, &driver.RunCancelParams{ID: held.ID, Reason: bad})
			return err
		},
		"reclaim": func() error {
			_, err := rs.RunReclaim(e.ctx, &driver.RunReclaimParams{Limit: driver.MaxRunReclaimBatch + 1})
			return err
		},
		"begin": func() error {
			_, err := es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: held.ID, Fence: held.Fence})
			return err
		},
		"commit": func() error {
			_, err := es.RunEffectCommit(e.ctx, &driver.RunEffectCommitParams{RunID: held.ID, Fence: held.Fence, Key: "k", Result: []byte("x")})
			return err
		},
		"resolve": func() error {
			_, err := es.RunEffectResolve(e.ctx, &driver.RunEffectResolveParams{RunID: held.ID, Fence: held.Fence, Key: bad})
			return err
		},
		"list": func() error { _, err := es.RunEffectList(e.ctx, &driver.RunEffectListParams{}); return err },
		"tx": func() error {
			_, err := es.RunTx(e.ctx, &driver.RunTxParams{RunID: held.ID, Fence: held.Fence, Key: "k"}, nil)
			return err
		},
		"emit": func() error {
			_, err := es.RunEventAppend(e.ctx, &driver.RunEventAppendParams{Events: []driver.RunEventInsert{{RunID: held.ID, Fence: held.Fence, Seq: 1, Kind: "k"}, {RunID: held.ID, Fence: held.Fence, Seq: 2, Kind: "k", Payload: []byte("{")}}})
			return err
		},
		"events": func() error {
			_, err := es.RunEventList(e.ctx, &driver.RunEventListParams{RunID: held.ID, AfterSeq: -1})
			return err
		},
	}
	for name, call := range calls {
		err := call()
		var ie *journal.InputError
		require.True(t, errors.As(err, &ie), "%s: want a *journal.InputError, got %v", name, err)
		require.ErrorIs(t, err, driver.ErrInvalid, name)
	}
	// A bad request of an append batch is answered in its own outcome; its
	// neighbour is appended.
	out, err := e.d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: "w", Requests: []journal.AppendRequest{
		{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "note", Payload: []byte("{")},
		{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "note", Payload: []byte(`{ "a" : 1 }`)}}})
	require.NoError(t, err)
	require.ErrorIs(t, out[0].Err, driver.ErrInvalid)
	require.NoError(t, out[1].Err)
	require.Equal(t, int64(2), out[1].Position)
	require.Equal(t, `{"a":1}`, string(e.read("w")[1].Payload), "stored compact")

	// Nothing was written by the refusals.
	got := e.run(held.ID)
	require.Equal(t, runs.StateRunning, got.State)
	require.Equal(t, held.Fence, got.Fence)
	require.Equal(t, r.ID, held.ID)
	effs, err := es.RunEffectList(e.ctx, &driver.RunEffectListParams{RunID: held.ID})
	require.NoError(t, err)
	require.Empty(t, effs)
	evs, err := es.RunEventList(e.ctx, &driver.RunEventListParams{RunID: held.ID})
	require.NoError(t, err)
	require.Empty(t, evs)
}

// caseEmptyBatchesAnsweredAlike: an empty batch writes nothing and gets the
// same (empty, non-nil) answer from every store.
func caseEmptyBatchesAnsweredAlike(t *testing.T, f Factory) {
	e := newEnv(t, f)
	rs, es := e.runStore(), e.effects()
	enq, err := rs.RunEnqueue(e.ctx, &driver.RunEnqueueParams{})
	require.NoError(t, err)
	require.NotNil(t, enq)
	require.Empty(t, enq)
	ren, err := rs.RunRenewMany(e.ctx, &driver.RunRenewManyParams{Owner: "a", Lease: time.Second})
	require.NoError(t, err)
	require.Equal(t, &driver.RunRenewManyResult{}, ren)
	com, err := rs.RunCompleteMany(e.ctx, &driver.RunCompleteManyParams{})
	require.NoError(t, err)
	require.Equal(t, &driver.RunCompleteManyResult{}, com)
	emit, err := es.RunEventAppend(e.ctx, &driver.RunEventAppendParams{})
	require.NoError(t, err)
	require.Equal(t, &driver.RunEventAppendResult{}, emit)
}
