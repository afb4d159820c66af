package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

func TestACommandIsAppliedOnceAndARetryGetsTheFirstReply(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		h := newHost(t, d, "home-1", programs.Bank{})
		require.NoError(t, h.Create(ctx, "acct"))

		first, err := h.Submit(ctx, "acct", deposit("alice", 10))
		require.NoError(t, err)
		require.False(t, first.Duplicate)
		require.JSONEq(t, `{"ok":true,"balance":10}`, string(first.Payload))

		again, err := h.Submit(ctx, "acct", deposit("alice", 10))
		require.NoError(t, err)
		require.True(t, again.Duplicate)
		require.Equal(t, first.Position, again.Position)
		require.JSONEq(t, string(first.Payload), string(again.Payload))

		bal, err := h.Submit(ctx, "acct", host.Command{Key: "b1", Payload: json.RawMessage(`{"op":"balance","account":"alice"}`)})
		require.NoError(t, err)
		require.JSONEq(t, `{"ok":true,"balance":10}`, string(bal.Payload), "the retry was not applied again")

		es := journalOf(t, d, "acct")
		require.Equal(t, map[string]int{"dep-alice-10": 1, "b1": 1}, turnKeys(es))
		auditOK(t, es)
	})
}

func TestAKeyReusedWithAnotherPayloadIsRefusedAndChangesNothing(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		h := newHost(t, d, "home-1", programs.Bank{})
		require.NoError(t, h.Create(ctx, "acct"))
		rep, err := h.Submit(ctx, "acct", deposit("alice", 10))
		require.NoError(t, err)
		before := journalOf(t, d, "acct")

		other := deposit("alice", 99)
		other.Key = "dep-alice-10"
		_, err = h.Submit(ctx, "acct", other)
		var kr *host.KeyReusedError
		require.ErrorAs(t, err, &kr)
		require.ErrorIs(t, err, lease.ErrKeyReused)
		require.Equal(t, rep.Position, kr.Position)
		require.Equal(t, before, journalOf(t, d, "acct"))
	})
}

func TestBadCommandsAreTypedAndChangeNothing(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		h := newHost(t, d, "home-1", programs.Bank{})
		require.NoError(t, h.Create(ctx, "acct"))
		before := journalOf(t, d, "acct")
		for name, c := range map[string]struct {
			world string
			cmd   host.Command
			want  error
		}{
			"no key":          {"acct", host.Command{Payload: json.RawMessage(`{}`)}, lease.ErrInvalid},
			"control in key":  {"acct", host.Command{Key: "a\x00b", Payload: json.RawMessage(`{}`)}, lease.ErrInvalid},
			"not JSON":        {"acct", host.Command{Key: "k", Payload: json.RawMessage(`hello`)}, lease.ErrInvalid},
			"too large":       {"acct", host.Command{Key: "k", Payload: json.RawMessage(`"` + string(make([]byte, 0)) + bigString(70_000) + `"`)}, lease.ErrInvalid},
			"unknown field":   {"acct", host.Command{Key: "k", Payload: json.RawMessage(`{"op":"deposit","account":"a","amount":1,"x":1}`)}, lease.ErrInvalid},
			"unknown op":      {"acct", host.Command{Key: "k", Payload: json.RawMessage(`{"op":"steal"}`)}, lease.ErrInvalid},
			"negative amount": {"acct", host.Command{Key: "k", Payload: json.RawMessage(`{"op":"deposit","account":"a","amount":-5}`)}, lease.ErrInvalid},
			"unknown world":   {"nope", deposit("a", 1), lease.ErrNotFound},
			"bad world id":    {"no pe", deposit("a", 1), lease.ErrInvalid},
		} {
			_, err := h.Submit(ctx, c.world, c.cmd)
			require.ErrorIs(t, err, c.want, name)
		}
		require.Equal(t, before, journalOf(t, d, "acct"), "a refused command journals nothing")
	})
}

func bigString(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}

func TestInsufficientFundsIsAJournaledReplyThatRetriesAlike(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		h := newHost(t, d, "home-1", programs.Bank{})
		require.NoError(t, h.Create(ctx, "acct"))
		w := host.Command{Key: "w1", Payload: json.RawMessage(`{"op":"withdraw","account":"bob","amount":5}`)}
		r1, err := h.Submit(ctx, "acct", w)
		require.NoError(t, err)
		require.JSONEq(t, `{"ok":false,"balance":0,"error":"insufficient funds"}`, string(r1.Payload))
		_, err = h.Submit(ctx, "acct", deposit("bob", 100))
		require.NoError(t, err)
		r2, err := h.Submit(ctx, "acct", w) // funds arrived since, but the retry answers the first decision
		require.NoError(t, err)
		require.True(t, r2.Duplicate)
		require.Equal(t, r1.Payload, r2.Payload)
	})
}

func TestAForgottenKeyIsStillAppliedOnceAndAnsweredFromTheJournal(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		h := newHost(t, d, "home-1", programs.Bank{}, func(c *host.Config) { c.MaxKeys = 1 })
		require.NoError(t, h.Create(ctx, "acct"))
		first, err := h.Submit(ctx, "acct", deposit("alice", 1))
		require.NoError(t, err)
		_, err = h.Submit(ctx, "acct", deposit("alice", 2)) // pushes the first key out of memory
		require.NoError(t, err)
		again, err := h.Submit(ctx, "acct", deposit("alice", 1))
		require.NoError(t, err)
		require.True(t, again.Duplicate)
		require.Equal(t, first.Position, again.Position)
		require.JSONEq(t, string(first.Payload), string(again.Payload))

		bal, err := h.Submit(ctx, "acct", host.Command{Key: "b", Payload: json.RawMessage(`{"op":"balance","account":"alice"}`)})
		require.NoError(t, err)
		require.JSONEq(t, `{"ok":true,"balance":3}`, string(bal.Payload), "the mirror was rebuilt without the retry's events")
		require.Equal(t, 1, turnKeys(journalOf(t, d, "acct"))["dep-alice-1"])
	})
}

func TestAWorldOfAnotherProgramIsRefused(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		bank := newHost(t, d, "home-1", programs.Bank{})
		require.NoError(t, bank.Create(ctx, "acct"))
		_, err := bank.Submit(ctx, "acct", deposit("alice", 1))
		require.NoError(t, err)
		kv := newHost(t, d, "kv-node", programs.KV{})
		err = kv.Prepare(ctx, "acct")
		var pe *host.ProgramError
		require.ErrorAs(t, err, &pe, "its mirror cannot fold the bank's turns")
		require.NoError(t, bank.Handoff(ctx, "acct", "kv-node"))
		err = kv.Acquire(ctx, "acct")
		require.ErrorAs(t, err, &pe)
		require.ErrorIs(t, err, lease.ErrInvalid)
		require.Empty(t, kv.Held())
	})
}

func TestARevokedWorldAnswersNotHolderAndAppliesNothing(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		h := newHost(t, d, "home-1", programs.Bank{})
		require.NoError(t, h.Create(ctx, "acct"))
		_, err := h.Submit(ctx, "acct", deposit("alice", 1))
		require.NoError(t, err)
		head, err := d.WorldGet(ctx, &driver.WorldGetParams{World: "acct"})
		require.NoError(t, err)
		_, err = d.LeaseChange(ctx, &driver.LeaseChangeParams{World: "acct", Op: "revoke",
			Plan: func(cur *driver.World, now time.Time) (journal.Plan, error) {
				return journal.PlanRevoke(cur.State, now, head.State.Epoch, "operator")
			}})
		require.NoError(t, err)

		_, err = h.Submit(ctx, "acct", deposit("alice", 2))
		require.ErrorIs(t, err, lease.ErrNotHolder)
		var nh *host.NotHolderError
		require.True(t, errors.As(err, &nh))
		require.Zero(t, turnKeys(journalOf(t, d, "acct"))["dep-alice-2"])
	})
}
