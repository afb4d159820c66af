package server_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

type whoamiReply struct {
	TokenID string   `json:"token_id"`
	Scopes  []string `json:"scopes"`
	May     struct{ Read, Work, Admin bool }
}

type countsReply struct {
	Counts []struct {
		Queue string `json:"queue"`
		State string `json:"state"`
		N     int64  `json:"n"`
	} `json:"counts"`
}

type leasesReply struct {
	Timing struct {
		MaxRunwayMS int64 `json:"max_runway_ms"`
		StopMS      int64 `json:"stop_ms"`
	} `json:"timing"`
	Leases []struct {
		RunID       int64  `json:"run_id"`
		Fence       int64  `json:"fence"`
		Owner       string `json:"owner"`
		RunwayMS    int64  `json:"runway_ms"`
		AvailableMS int64  `json:"available_ms"`
		LagMS       int64  `json:"lag_ms"`
	} `json:"leases"`
	Total int `json:"total"`
}

type auditReply struct {
	World   string `json:"world"`
	Entries int64  `json:"entries"`
	OK      bool   `json:"ok"`
	Spans   []struct {
		Epoch    int64  `json:"epoch"`
		Holder   string `json:"holder"`
		From, To int64
	} `json:"spans"`
}

// TestDashboardEndpoints: the read-only endpoints the dashboard reads, on
// both stores — each shows only what the token may read, and a token
// with no scope on the data sees nothing.
func TestDashboardEndpoints(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		d := dashboardFixture(t, b)

		// whoami: the token's scopes, and what it may do where.
		var who whoamiReply
		b.get(t, "/v1/whoami").ok(t, &who)
		require.Equal(t, []string{"admin"}, who.Scopes)
		require.True(t, who.May.Admin)
		reader := b.as(t, b.mint(t, "read"))
		mailOnly := b.as(t, b.mint(t, "admin:queue:mail", "read:world:w*"))
		nobody := b.as(t, b.mint(t, "read:queue:zzz"))
		who = whoamiReply{}
		reader.get(t, "/v1/whoami?queue=mail").ok(t, &who)
		require.Equal(t, []string{"read"}, who.Scopes)
		require.True(t, who.May.Read)
		require.False(t, who.May.Work || who.May.Admin, "a read token may not act")
		who = whoamiReply{}
		mailOnly.get(t, "/v1/whoami?queue=mail").ok(t, &who)
		require.True(t, who.May.Admin)
		who = whoamiReply{}
		mailOnly.get(t, "/v1/whoami?queue=bills").ok(t, &who)
		require.False(t, who.May.Read)
		b.anon(t).get(t, "/v1/whoami").problem(t, "unauthorized")

		// the counts: by queue and state, only the queues the token reads.
		var cs countsReply
		b.get(t, "/v1/stats/runs").ok(t, &cs)
		got := map[string]int64{}
		for _, c := range cs.Counts {
			got[c.Queue+"/"+c.State] = c.N
		}
		require.Equal(t, map[string]int64{"bills/available": 1, "mail/available": 2, "mail/running": 1}, got)
		cs = countsReply{}
		mailOnly.get(t, "/v1/stats/runs").ok(t, &cs)
		require.Len(t, cs.Counts, 2)
		for _, c := range cs.Counts {
			require.Equal(t, "mail", c.Queue)
		}
		cs = countsReply{}
		nobody.get(t, "/v1/stats/runs").ok(t, &cs)
		require.Empty(t, cs.Counts, "a token with no scope on these queues sees no counts")
		nobody.get(t, "/v1/runs").problem(t, "forbidden")
		nobody.get(t, runPath(d.held.ID, "")).problem(t, "forbidden")

		// the leases this server vouches for: the claim, with its runway.
		var ls leasesReply
		reader.get(t, "/v1/leases").ok(t, &ls)
		require.Equal(t, 1, ls.Total)
		require.Len(t, ls.Leases, 1)
		l := ls.Leases[0]
		require.Equal(t, d.held.ID, l.RunID)
		require.Equal(t, d.held.Fence, l.Fence)
		require.Equal(t, "worker-1", l.Owner)
		require.Positive(t, l.RunwayMS)
		require.LessOrEqual(t, l.RunwayMS, ls.Timing.MaxRunwayMS)
		require.LessOrEqual(t, l.AvailableMS, l.RunwayMS)
		mailOnly.get(t, "/v1/leases").problem(t, "forbidden")
		// a completed run's lease is no longer shown.
		b.post(t, runPath(d.held.ID, "/complete"), map[string]any{"fence": d.held.Fence}).ok(t, &runBody{})
		ls = leasesReply{}
		b.get(t, "/v1/leases").ok(t, &ls)
		require.Empty(t, ls.Leases)

		// worlds: listed when readable; the audit is the root package's.
		b.post(t, "/v1/worlds", map[string]any{"world": "x1", "home": "node-h"}).ok(t, &worldReply{})
		var wp struct {
			Worlds []worldHead `json:"worlds"`
			Next   string      `json:"next"`
		}
		b.get(t, "/v1/worlds").ok(t, &wp)
		require.Len(t, wp.Worlds, 2)
		wp.Worlds = nil
		mailOnly.get(t, "/v1/worlds").ok(t, &wp)
		require.Len(t, wp.Worlds, 1)
		require.Equal(t, "w1", wp.Worlds[0].World)
		require.Equal(t, "node-h", wp.Worlds[0].Holder)
		require.Equal(t, int64(3), wp.Worlds[0].Epoch)
		wp.Worlds = nil
		b.get(t, "/v1/worlds?limit=1").ok(t, &wp)
		require.Equal(t, "w1", wp.Next)
		b.get(t, "/v1/worlds?limit=x").problem(t, "invalid")

		var a auditReply
		mailOnly.get(t, worldPath("w1", "/audit")).ok(t, &a)
		rep, err := b.c.Audit(context.Background(), "w1")
		require.NoError(t, err)
		require.True(t, a.OK)
		require.Equal(t, rep.Entries, a.Entries)
		require.Len(t, a.Spans, len(rep.Spans))
		for i, sp := range rep.Spans {
			require.Equal(t, sp.Epoch, a.Spans[i].Epoch)
			require.Equal(t, sp.Holder, a.Spans[i].Holder)
			require.Equal(t, sp.From, a.Spans[i].From)
			require.Equal(t, sp.To, a.Spans[i].To)
		}
		require.Equal(t, []int64{1, 2, 3}, []int64{a.Spans[0].Epoch, a.Spans[1].Epoch, a.Spans[2].Epoch})
		require.Equal(t, []string{"node-h", "node-s", "node-h"}, []string{a.Spans[0].Holder, a.Spans[1].Holder, a.Spans[2].Holder})
		nobody.get(t, worldPath("w1", "/audit")).problem(t, "forbidden")
		b.get(t, worldPath("nope", "/audit")).problem(t, "not-found")
		require.Equal(t, d.handoff, []int64{a.Spans[1].From, a.Spans[2].From}, "each handoff's entry opens its new epoch's span")
	})
}
