package server_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// dashData is what dashboardFixture put in the store: the figures the
// dashboard's endpoints and pages must show.
type dashData struct {
	mail    []run   // three runs of "mail"; mail[0] is held by worker-1
	bills   run     // one run of "bills", available
	held    run     // mail[0] as claimed
	events  int     // events worker-1 emitted on held
	handoff []int64 // the world's position after each handoff
}

// dashboardFixture enqueues runs on two queues, claims one, emits its
// events and commits one effect, and builds world "w1" with two handoffs
// (epochs 1 node-h, 2 node-s, 3 node-h) and three appends between them.
func dashboardFixture(t *testing.T, b *testBundle) dashData {
	t.Helper()
	var d dashData
	for i := 0; i < 3; i++ {
		d.mail = append(d.mail, b.enqueue(t, "mail", `{"to":"ada@example.com"}`))
	}
	d.bills = b.enqueue(t, "bills", `{"amount":12}`)
	d.held = b.claimOne(t, "mail", "worker-1")
	require.Equal(t, d.mail[0].ID, d.held.ID)
	b.emit(t, d.held, 1, "started")
	b.emit(t, d.held, 2, "progress")
	d.events = 2
	var begun struct{ Outcome string }
	b.post(t, runPath(d.held.ID, "/effects/begin"), map[string]any{"key": "send", "fence": d.held.Fence, "owner": "worker-1", "max_duration_ms": 1000}).ok(t, &begun)
	require.Equal(t, "started", begun.Outcome)
	var committed json.RawMessage
	b.post(t, runPath(d.held.ID, "/effects/commit"), map[string]any{"key": "send", "fence": d.held.Fence, "result": json.RawMessage(`{"id":"m-1"}`)}).ok(t, &committed)

	var w worldReply
	b.post(t, "/v1/worlds", map[string]any{"world": "w1", "home": "node-h"}).ok(t, &w)
	b.post(t, worldPath("w1", "/handoff"), map[string]any{"from": "node-h", "to": "node-s", "epoch": 1}).ok(t, &w)
	d.handoff = append(d.handoff, w.World.Position)
	b.post(t, worldPath("w1", "/append"), map[string]any{"holder": "node-s", "epoch": 2, "seen_position": w.World.GrantedAt,
		"entries": entries(`{"n":1}`, `{"n":2}`, `{"n":3}`)}).ok(t, &struct{ Positions []int64 }{})
	b.post(t, worldPath("w1", "/handoff"), map[string]any{"from": "node-s", "to": "node-h", "epoch": 2}).ok(t, &w)
	d.handoff = append(d.handoff, w.World.Position)
	require.Equal(t, int64(3), w.World.Epoch)
	return d
}

// emit emits one event of kind as the run's holder.
func (b *testBundle) emit(t *testing.T, r run, seq int64, kind string) {
	t.Helper()
	b.post(t, runPath(r.ID, "/events"), map[string]any{"fence": r.Fence,
		"events": []map[string]any{{"seq": seq, "kind": kind, "payload": json.RawMessage(fmt.Sprintf(`{"step":%d}`, seq))}}}).ok(t, &struct{ Accepted int }{})
}
