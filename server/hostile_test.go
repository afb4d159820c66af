package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/internal/hostile"
	"github.com/leasehold/leasehold/server"
)

// rawJSONString quotes s as a JSON string the way a careless client in
// another language would: quote, backslash and C0 escaped, every other
// byte sent as it is (invalid UTF-8 included).
func rawJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// compactJSON is the form an accepted payload reads back in.
func compactJSON(v []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return "<not json>"
	}
	return b.String()
}

// withPayload is a JSON object body with a raw payload member added (none
// when v is nil: the member is absent).
func withPayload(fields, member string, v []byte) []byte {
	if v == nil {
		return []byte("{" + fields + "}")
	}
	return []byte("{" + fields + `,"` + member + `":` + string(v) + "}")
}

// TestHostileCorpusThroughTheServer drives internal/hostile's corpus
// through the HTTP API on both stores, as raw bodies a careless client in
// another language would send (invalid UTF-8 and lone surrogates
// included): strings as queue, unique key, owner, cancel reason, effect
// key and event kind; payloads as run payload, effect result and event
// payload; integers as priority, attempts, delay, claim limit, event
// sequence, run id and retry fence; and (hostile_streams_test.go) the SSE
// streams' queue names and resume ids, the admin mode API's worker names
// and modes, a snooze's delay and bound. Every call must be accepted or refused with a
// typed problem (never internal, never an untyped answer); a refusal must
// leave the run's ledger and log as they were; an acceptance must read
// back as sent (JSON compacted); and both stores must answer alike.
func TestHostileCorpusThroughTheServer(t *testing.T) {
	t.Parallel()
	outcomes := make([]map[string]string, len(stores))
	for k, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			outcomes[k] = driveServer(t, setup(t, s.open, leasehold.Config{}, server.Config{}))
		})
	}
	var diff []string
	for key, a := range outcomes[0] {
		if b := outcomes[1][key]; a != b {
			diff = append(diff, fmt.Sprintf("%s: sqlite %s, postgres %s", key, a, b))
		}
	}
	sort.Strings(diff)
	kinds := map[string]int{}
	for _, o := range outcomes[0] {
		kinds[o]++
	}
	t.Logf("hostile server: %d calls on each store, outcomes %v, disagreements=%d", len(outcomes[0]), kinds, len(diff))
	require.Len(t, outcomes[1], len(outcomes[0]))
	require.Empty(t, diff)
}

// outcomeOf names an answer: "accepted", or its problem type's last
// segment; anything else fails the test.
func outcomeOf(t *testing.T, key string, r reply) string {
	t.Helper()
	if r.status < 300 {
		return "accepted"
	}
	var p problem
	if r.ctype != "application/problem+json" || json.Unmarshal(r.body, &p) != nil {
		t.Errorf("%s: status %d answered without a problem document: %q", key, r.status, r.body)
		return "untyped"
	}
	typ := strings.TrimPrefix(p.Type, "https://leasehold.dev/problems/")
	if typ == "internal" || typ == p.Type || p.Status != r.status {
		t.Errorf("%s: not a typed refusal: %s", key, r.body)
	}
	return typ
}

func driveServer(t *testing.T, b *testBundle) map[string]string {
	out := map[string]string{}
	post := func(key, path string, body []byte) (reply, bool) {
		r := b.do(t, http.MethodPost, path, body)
		out[key] = outcomeOf(t, key, r)
		return r, out[key] == "accepted"
	}
	// One run held for the whole drive: effects and events go to it.
	b.enqueue(t, "held", `{}`)
	held := b.claimOne(t, "held", "runner")
	ledger := func() (effects, events int) {
		var e struct{ Effects []json.RawMessage }
		b.get(t, runPath(held.ID, "/effects")).ok(t, &e)
		var v struct{ Events []json.RawMessage }
		b.get(t, runPath(held.ID, "/events?limit=10000")).ok(t, &v)
		return len(e.Effects), len(v.Events)
	}
	unchanged := func(key string, fn func() bool) {
		effs, evs := ledger()
		if !fn() {
			if e2, v2 := ledger(); e2 != effs || v2 != evs {
				t.Errorf("%s: refused, yet the ledger went %d→%d and the log %d→%d", key, effs, e2, evs, v2)
			}
		}
	}
	seq := int64(0)
	fence := strconv.FormatInt(held.Fence, 10)

	for _, s := range hostile.Strings() {
		v, q := s.Value, rawJSONString(s.Value)
		key := func(entry string) string { return entry + "/" + s.Name }
		if r, ok := post(key("enqueue.queue"), "/v1/runs", []byte(`{"runs":[{"queue":`+q+`}]}`)); ok {
			var e enqueued
			r.ok(t, &e)
			require.Equal(t, v, e.Runs[0].Run.Queue, key("enqueue.queue"))
		}
		if r, ok := post(key("enqueue.unique_key"), "/v1/runs", []byte(`{"runs":[{"queue":"q","unique_key":`+q+`}]}`)); ok {
			var e enqueued
			r.ok(t, &e)
			var got runBody
			b.get(t, runPath(e.Runs[0].Run.ID, "")).ok(t, &got)
			require.Equal(t, v, got.Run.UniqueKey, key("enqueue.unique_key"))
		}
		post(key("claim.owner"), "/v1/runs/claim", []byte(`{"queue":"nothing-here","owner":`+q+`}`))
		r := b.enqueue(t, "cancelled", `{}`)
		if _, ok := post(key("cancel.reason"), runPath(r.ID, "/cancel"), []byte(`{"reason":`+q+`}`)); ok {
			var got runBody
			b.get(t, runPath(r.ID, "")).ok(t, &got)
			require.Equal(t, v, got.Run.Reason, key("cancel.reason"))
		}
		unchanged(key("effects/begin.key"), func() bool {
			_, ok := post(key("effects/begin.key"), runPath(held.ID, "/effects/begin"),
				[]byte(`{"key":`+q+`,"fence":`+fence+`,"owner":"runner","max_duration_ms":1000}`))
			return ok
		})
		unchanged(key("events.kind"), func() bool {
			seq++
			_, ok := post(key("events.kind"), runPath(held.ID, "/events"),
				[]byte(`{"fence":`+fence+`,"events":[{"seq":`+strconv.FormatInt(seq, 10)+`,"kind":`+q+`}]}`))
			return ok
		})
	}

	for _, p := range hostile.Payloads() {
		key := func(entry string) string { return entry + "/" + p.Name }
		body := append([]byte(`{"runs":[`), withPayload(`"queue":"q"`, "payload", p.Value)...)
		body = append(body, "]}"...)
		if r, ok := post(key("enqueue.payload"), "/v1/runs", body); ok {
			var e enqueued
			r.ok(t, &e)
			if p.Value != nil {
				require.Equal(t, compactJSON(p.Value), string(e.Runs[0].Run.Payload), key("enqueue.payload"))
			}
		}
		ek := "result-" + p.Name
		b.post(t, runPath(held.ID, "/effects/begin"), map[string]any{"key": ek, "fence": held.Fence, "owner": "runner", "max_duration_ms": 1000}).ok(t, &struct{}{})
		if _, ok := post(key("effects/commit.result"), runPath(held.ID, "/effects/commit"),
			withPayload(`"key":"`+ek+`","fence":`+fence, "result", p.Value)); ok && p.Value != nil {
			var e struct {
				Effects []struct {
					Key    string
					Result json.RawMessage
				}
			}
			b.get(t, runPath(held.ID, "/effects")).ok(t, &e)
			for _, x := range e.Effects {
				if x.Key == ek {
					require.Equal(t, compactJSON(p.Value), string(x.Result), key("effects/commit.result"))
				}
			}
		}
		unchanged(key("events.payload"), func() bool {
			seq++
			_, ok := post(key("events.payload"), runPath(held.ID, "/events"),
				[]byte(`{"fence":`+fence+`,"events":[`+string(withPayload(`"seq":`+strconv.FormatInt(seq, 10)+`,"kind":"k"`, "payload", p.Value))+`]}`))
			return ok
		})
	}

	for _, n := range hostile.Ints() {
		v := strconv.FormatInt(n.Value, 10)
		key := func(entry string) string { return entry + "/" + n.Name }
		post(key("enqueue.priority"), "/v1/runs", []byte(`{"runs":[{"queue":"q","priority":`+v+`}]}`))
		post(key("enqueue.max_attempts"), "/v1/runs", []byte(`{"runs":[{"queue":"q","max_attempts":`+v+`}]}`))
		post(key("enqueue.delay_ms"), "/v1/runs", []byte(`{"runs":[{"queue":"q","delay_ms":`+v+`}]}`))
		post(key("claim.limit"), "/v1/runs/claim", []byte(`{"queue":"nothing-here","owner":"o","limit":`+v+`}`))
		unchanged(key("events.seq"), func() bool {
			_, ok := post(key("events.seq"), runPath(held.ID, "/events"), []byte(`{"fence":`+fence+`,"events":[{"seq":`+v+`,"kind":"int"}]}`))
			return ok
		})
		unchanged(key("effects/begin.max_duration_ms"), func() bool {
			_, ok := post(key("effects/begin.max_duration_ms"), runPath(held.ID, "/effects/begin"),
				[]byte(`{"key":"dur-`+n.Name+`","fence":`+fence+`,"owner":"runner","max_duration_ms":`+v+`}`))
			return ok
		})
		r := b.get(t, "/v1/runs/"+v)
		out[key("get.id")] = outcomeOf(t, key("get.id"), r)
		post(key("retry.id"), "/v1/runs/"+v+"/retry", []byte(`{}`))
		c := b.enqueue(t, "cancelled", `{}`)
		b.post(t, runPath(c.ID, "/cancel"), map[string]any{"reason": "op"}).ok(t, &runBody{})
		if _, ok := post(key("retry.fence"), runPath(c.ID, "/retry"), []byte(`{"fence":`+v+`}`)); ok {
			require.Equal(t, "available", b.runState(t, c.ID), key("retry.fence"))
		}
	}
	driveWorldsAndTokens(t, b, out) // hostile_worlds_test.go
	driveStreamsAndModes(t, b, out) // hostile_streams_test.go
	return out
}
