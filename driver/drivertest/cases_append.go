package drivertest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

var appendCases = []Case{
	{"AppendAcceptedAndReadBack", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		for i := range 3 {
			pos, err := e.append1("w1", "home", 1, 1, "note", fmt.Sprintf(` {"i": %d} `, i))
			require.NoError(t, err)
			require.Equal(t, int64(i+2), pos)
		}
		es := e.read("w1")
		require.Len(t, es, 4)
		require.Equal(t, `{"i":2}`, string(es[3].Payload), "payload stored compact")
		require.Equal(t, "home", es[3].Holder)
		e.audit("w1")
		es, err := e.d.JournalRead(e.ctx, &driver.JournalReadParams{World: "w1", From: 3, Limit: 1})
		require.NoError(t, err)
		require.Len(t, es, 1)
		require.Equal(t, int64(3), es[0].Position)
	}},
	{"AppendBatchIsOneOrderedCommit", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		reqs := make([]journal.AppendRequest, 50)
		for i := range reqs {
			reqs[i] = journal.AppendRequest{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "n", Payload: []byte(fmt.Sprint(i))}
		}
		out, err := e.d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: "w1", Requests: reqs})
		require.NoError(t, err)
		for i, o := range out {
			require.NoError(t, o.Err)
			require.Equal(t, int64(i+2), o.Position)
		}
		es := e.read("w1")
		require.Len(t, es, 51)
		for i, en := range es[1:] {
			require.Equal(t, fmt.Sprint(i), string(en.Payload))
		}
		e.audit("w1")
	}},
	{"AppendStaleEpochRefusedAndJournaled", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		e.handoff("w1", "home", "a", 1)
		_, err := e.append1("w1", "home", 1, 1, "x", "{}")
		require.ErrorIs(t, err, driver.ErrFenced)
		var re *journal.RefusedError
		require.ErrorAs(t, err, &re)
		require.Equal(t, journal.ReasonStaleEpoch, re.Reason)
		require.Equal(t, int64(2), re.CurrentEpoch)
		require.Equal(t, "a", re.CurrentHolder)
		es := e.read("w1")
		require.Len(t, es, 3)
		require.Equal(t, journal.KindRejected, es[2].Kind)
		require.JSONEq(t, `{"holder":"home","epoch":1,"reason":"stale_epoch"}`, string(es[2].Payload))
		_, err = e.append1("w1", "a", 3, 2, "x", "{}")
		require.ErrorIs(t, err, driver.ErrFenced, "an epoch from the future is fenced too")
		e.audit("w1")
	}},
	{"AppendWrongHolderRefusedAndJournaled", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		_, err := e.append1("w1", "intruder", 1, 1, "x", "{}")
		require.ErrorIs(t, err, driver.ErrNotHolder)
		es := e.read("w1")
		require.Len(t, es, 2)
		require.JSONEq(t, `{"holder":"intruder","epoch":1,"reason":"not_holder"}`, string(es[1].Payload))
		e.audit("w1")
	}},
	{"AppendSeenBelowGrantRefusedNotJournaled", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		e.append1("w1", "home", 1, 1, "x", "{}")
		e.handoff("w1", "home", "a", 1) // grants epoch 2 at position 3
		_, err := e.append1("w1", "a", 2, 2, "x", "{}")
		require.ErrorIs(t, err, driver.ErrSeenBehind)
		require.Len(t, e.read("w1"), 3, "not journaled")
		pos, err := e.append1("w1", "a", 2, 3, "x", "{}")
		require.NoError(t, err)
		require.Equal(t, int64(4), pos)
		e.audit("w1")
	}},
	{"AppendExpiredLeaseRefusedAndJournaled", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		e.h.Clock.Advance(term - time.Microsecond)
		_, err := e.append1("w1", "home", 1, 1, "x", "{}")
		require.NoError(t, err, "live until the last microsecond")
		e.h.Clock.Advance(time.Microsecond)
		_, err = e.append1("w1", "home", 1, 1, "x", "{}")
		require.ErrorIs(t, err, driver.ErrLeaseExpired)
		es := e.read("w1")
		require.Len(t, es, 3)
		require.JSONEq(t, `{"holder":"home","epoch":1,"reason":"expired"}`, string(es[2].Payload))
		e.audit("w1")
	}},
	{"AppendRejectionsJournaledOncePerHolderPerEpoch", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		for range 5 {
			_, err := e.append1("w1", "zombie", 1, 1, "x", "{}")
			require.ErrorIs(t, err, driver.ErrNotHolder)
		}
		reqs := []journal.AppendRequest{{Holder: "z2", Epoch: 1, Kind: "x"}, {Holder: "z2", Epoch: 1, Kind: "x"}, {Holder: "zombie", Epoch: 1, Kind: "x"}}
		_, err := e.d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: "w1", Requests: reqs})
		require.NoError(t, err)
		es := e.read("w1")
		require.Equal(t, 2, countKind(es, journal.KindRejected), "one for zombie, one for z2")
		e.handoff("w1", "home", "a", 1)
		_, err = e.append1("w1", "zombie", 1, 1, "x", "{}")
		require.ErrorIs(t, err, driver.ErrFenced)
		_, err = e.append1("w1", "zombie", 2, 1, "x", "{}")
		require.ErrorIs(t, err, driver.ErrNotHolder)
		require.Equal(t, 3, countKind(e.read("w1"), journal.KindRejected), "a new epoch journals the zombie once more")
		e.audit("w1")
	}},
	{"AppendBadInputChangesNothing", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		e.append1("w1", "home", 1, 1, "x", `{"keep":true}`)
		before := e.read("w1")
		reqs := []journal.AppendRequest{
			{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "x", Payload: []byte(`"` + strings.Repeat("a", journal.MaxPayloadBytes) + `"`)},
			{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "lease.granted", Payload: []byte(`{}`)},
			{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "lease.unknown", Payload: []byte(`{}`)},
			{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "x", Payload: []byte(`{"a":`)},
			{Holder: "home", Epoch: 1, SeenPosition: -1, Kind: "x", Payload: []byte(`{}`)},
			{Holder: "bad holder", Epoch: 1, SeenPosition: 1, Kind: "x", Payload: []byte(`{}`)},
		}
		out, err := e.d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: "w1", Requests: reqs})
		require.NoError(t, err)
		for i, o := range out {
			require.ErrorIs(t, o.Err, driver.ErrInvalid, "request %d", i)
		}
		require.Equal(t, before, e.read("w1"), "nothing journaled, nothing touched")
		e.audit("w1")
	}},
}
