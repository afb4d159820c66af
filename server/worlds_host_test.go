package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/server"
)

// TestCommandsGoToTheAttachedHost: with a world host attached
// (Config.Host), a command submitted through the API runs on the world's
// turn; its retry answers the first reply; a world the host does not
// hold is the host's not-holder problem naming the holder; a command the
// program refuses is the host's problem; bad bodies are refused typed.
func TestCommandsGoToTheAttachedHost(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		d := open(t)
		_, err := d.Migrate(t.Context()) // the host registers its key at start
		require.NoError(t, err)
		h, err := host.New(host.Config{Store: d, Node: "node-h", Program: programs.KV{}, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		b := setup(t, func(*testing.T) leasehold.Driver { return d }, leasehold.Config{}, server.Config{Host: h})
		t.Cleanup(func() { // before the client closes the store (cleanups run last-in first-out)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, h.Stop(ctx))
		})
		require.NoError(t, h.Create(t.Context(), "kv1"))

		put := map[string]any{"key": "c1", "payload": json.RawMessage(`{"op":"put","key":"a","value":1}`)}
		var rep struct {
			Position  int64           `json:"position"`
			Payload   json.RawMessage `json:"payload"`
			Duplicate bool            `json:"duplicate"`
		}
		b.post(t, worldPath("kv1", "/commands"), put).ok(t, &rep)
		require.Positive(t, rep.Position)
		require.False(t, rep.Duplicate)
		first := rep.Position
		b.post(t, worldPath("kv1", "/commands"), put).ok(t, &rep)
		require.True(t, rep.Duplicate, "a retried key answers the first reply")
		require.Equal(t, first, rep.Position)

		var w worldReply
		b.post(t, "/v1/worlds", map[string]any{"world": "elsewhere", "home": "node-x"}).ok(t, &w)
		r := b.post(t, worldPath("elsewhere", "/commands"), put)
		r.problem(t, "not-holder")
		require.Contains(t, string(r.body), `"holder":"node-x"`, "it names the holder to go to")

		r = b.post(t, worldPath("kv1", "/commands"), map[string]any{"key": "c2", "payload": json.RawMessage(`{"op":"nope"}`)})
		require.GreaterOrEqual(t, r.status, 400, "%s", r.body)
		require.Less(t, r.status, 500, "%s", r.body)
		b.do(t, http.MethodPost, worldPath("kv1", "/commands"), []byte(`{"key":"c3","payload":{},"x":1}`)).problem(t, "invalid")
		b.do(t, http.MethodPost, worldPath("kv1", "/commands"), []byte(`{"key":`)).problem(t, "invalid")
		b.as(t, b.mint(t, "read:world:kv1")).post(t, worldPath("kv1", "/commands"), put).problem(t, "forbidden")

		// The dashboard's health page shows the host and the world it
		// holds, with its load (what the hot-world band judges).
		var hh struct {
			Host *struct {
				Node   string
				Stats  struct{ Acquired int64 }
				Worlds []struct {
					World          string
					TurnsPerSecond float64 `json:"turns_per_second"`
					InboxDepth     int     `json:"inbox_depth"`
				}
			}
		}
		b.get(t, "/v1/stats/health").ok(t, &hh)
		require.NotNil(t, hh.Host)
		require.Equal(t, "node-h", hh.Host.Node)
		require.Positive(t, hh.Host.Stats.Acquired)
		require.Len(t, hh.Host.Worlds, 1)
		require.Equal(t, "kv1", hh.Host.Worlds[0].World)
		require.GreaterOrEqual(t, hh.Host.Worlds[0].TurnsPerSecond, 0.0)
	})
}
