package server_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/hostile"
)

// openOnce GETs path and answers as soon as the headers arrive: a stream
// that opened is "accepted" and disconnected at once; anything else is
// read whole, as a problem. The corpus must never leave a stream open.
func (b *testBundle) openOnce(t *testing.T, path string) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.url+path, nil)
	require.NoError(t, err)
	resp, err := b.http.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type")}
	if r.ctype == "text/event-stream" {
		require.Equal(t, http.StatusOK, r.status)
		return r
	}
	r.body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	return r
}

// driveStreamsAndModes is the corpus through the endpoints of
// stream_queue.go, stream_events.go, stream_journal.go, snooze.go and
// admin_mode.go: every hostile string as a queue name in the queue
// stream's path, as each stream's resume id (?after=, which takes any
// bytes: Last-Event-ID is a header a client library refuses to send with
// a newline) and as an admin-mode worker name and mode; every hostile
// integer as a snooze's delay_ms and max_snoozes. Accepted or a typed
// problem, as for the rest of the corpus; a refused snooze leaves its run
// held.
func driveStreamsAndModes(t *testing.T, b *testBundle, out map[string]string) {
	stream := func(key, path string) {
		out[key] = outcomeOf(t, key, b.openOnce(t, path))
	}
	r := b.enqueue(t, "streamed", `{}`)
	if _, err := b.c.CreateWorld(context.Background(), "hstream", "home"); err != nil {
		t.Fatal(err)
	}
	for _, s := range hostile.Strings() {
		key := func(entry string) string { return entry + "/" + s.Name }
		after := "?after=" + url.QueryEscape(s.Value)
		stream(key("queues/events/stream.queue"), "/v1/queues/"+url.PathEscape(s.Value)+"/events/stream")
		stream(key("queues/events/stream.after"), "/v1/queues/streamed/events/stream"+after)
		stream(key("runs/events/stream.after"), runPath(r.ID, "/events/stream"+after))
		stream(key("worlds/journal/stream.after"), "/v1/worlds/hstream/journal/stream"+after)

		q := rawJSONString(s.Value)
		for entry, body := range map[string]string{
			"admin/mode.worker":        `{"mode":"sync","worker":` + q + `}`,
			"admin/mode.remote-owner":  `{"mode":"sync","worker":` + rawJSONString("remote:"+s.Value) + `}`,
			"admin/mode.mode":          `{"mode":` + q + `,"worker":"remote-holders"}`,
			"admin/mode.mode-all":      `{"mode":` + q + `,"all":true}`,
			"admin/mode.remote-holder": `{"mode":"writebehind","worker":"remote-holders"}`, // back to the default each round
		} {
			rep := b.do(t, http.MethodPost, "/v1/admin/mode", []byte(body))
			out[key(entry)] = outcomeOf(t, key(entry), rep)
		}
	}
	for _, n := range hostile.Ints() {
		v := strconv.FormatInt(n.Value, 10)
		key := func(entry string) string { return entry + "/" + n.Name }
		for entry, field := range map[string]string{"snooze.delay_ms": `"delay_ms":` + v, "snooze.max_snoozes": `"delay_ms":0,"max_snoozes":` + v} {
			b.enqueue(t, "snz", `{}`)
			held := b.claimOne(t, "snz", "runner")
			rep := b.do(t, http.MethodPost, runPath(held.ID, "/snooze"), []byte(`{"fence":`+strconv.FormatInt(held.Fence, 10)+`,`+field+`}`))
			out[key(entry)] = outcomeOf(t, key(entry), rep)
			var got runBody
			b.get(t, runPath(held.ID, "")).ok(t, &got)
			if out[key(entry)] != "accepted" {
				require.Equal(t, "running", got.Run.State, "%s: refused, yet the run is no longer held", key(entry))
			} else {
				require.Equal(t, "available", got.Run.State, key(entry))
			}
			// Leave no run of snz behind for the next claim.
			b.post(t, runPath(held.ID, "/cancel"), map[string]any{"reason": "corpus"}).ok(t, &struct{}{})
		}
	}
}
