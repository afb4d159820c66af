package server_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// TestAdminModeSwitchesAttachedWorkers: GET/POST /v1/admin/mode read and
// switch the heartbeat mode of the attached workers, one or all; /metrics
// carries each worker's mode and switches under its name; bad input,
// unknown workers and non-admin tokens are refused with typed problems and
// change nothing — on both stores.
func TestAdminModeSwitchesAttachedWorkers(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		for _, n := range []string{"a", "b"} {
			w, err := b.c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"q": 1}, Mode: leasehold.ModeDark})
			require.NoError(t, err)
			require.NoError(t, b.s.AttachWorker(n, w))
		}
		w, err := b.c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"q": 1}})
		require.NoError(t, err)
		require.ErrorIs(t, b.s.AttachWorker("a", w), leasehold.ErrConflict, "one name, one worker")
		require.ErrorIs(t, b.s.AttachWorker("bad name!", w), leasehold.ErrInvalid)

		var l server.ModeList
		b.get(t, "/v1/admin/mode").ok(t, &l)
		require.Equal(t, []server.WorkerMode{{Worker: "a", Mode: "dark"}, {Worker: "b", Mode: "dark"}, {Worker: "remote-holders", Mode: "writebehind"}}, l.Workers,
			"the attached workers, then the remote runners (remote_mode.go)")

		b.post(t, "/v1/admin/mode", map[string]any{"mode": "writebehind", "worker": "b"}).ok(t, &l)
		require.Equal(t, []server.WorkerMode{{Worker: "b", Mode: "writebehind", Previous: "dark"}}, l.Workers)
		b.post(t, "/v1/admin/mode", map[string]any{"mode": "sync", "all": true}).ok(t, &l)
		require.Equal(t, []server.WorkerMode{{Worker: "a", Mode: "sync", Previous: "dark"}, {Worker: "b", Mode: "sync", Previous: "writebehind"},
			{Worker: "remote-holders", Mode: "sync", Previous: "writebehind"}}, l.Workers, "all: the remote runners too")

		before := b.get(t, "/v1/admin/mode").body
		for name, body := range map[string]string{
			"unknown mode":    `{"mode":"fast","all":true}`,
			"neither target":  `{"mode":"sync"}`,
			"both targets":    `{"mode":"sync","all":true,"worker":"a"}`,
			"unknown field":   `{"mode":"sync","all":true,"force":true}`,
			"malformed":       `{"mode":`,
			"mode not string": `{"mode":1,"all":true}`,
		} {
			b.do(t, "POST", "/v1/admin/mode", []byte(body)).problem(t, "invalid")
			require.Equal(t, before, b.get(t, "/v1/admin/mode").body, name)
		}
		b.post(t, "/v1/admin/mode", map[string]any{"mode": "dark", "worker": "z"}).problem(t, "not-found")
		b.do(t, "POST", "/v1/admin/mode", []byte(`{"mode":"dark","all":true,"worker":"`+strings.Repeat("x", 5<<20)+`"}`)).problem(t, "too-large")
		b.anon(t).get(t, "/v1/admin/mode").problem(t, "unauthorized")
		worker := b.as(t, b.mint(t, "work:queue:*"))
		worker.get(t, "/v1/admin/mode").problem(t, "forbidden")
		worker.post(t, "/v1/admin/mode", map[string]any{"mode": "dark", "all": true}).problem(t, "forbidden")
		require.Equal(t, before, b.get(t, "/v1/admin/mode").body, "nothing switched by a refusal")

		metrics := string(b.get(t, "/metrics").body)
		for _, line := range []string{
			`leasehold_keeper_mode{kind="runs",mode="sync",worker="a"} 1`,
			`leasehold_keeper_mode_switches_total{from="dark",kind="runs",to="sync",worker="a"} 1`,
			`leasehold_keeper_mode_switches_total{from="dark",kind="runs",to="writebehind",worker="b"} 1`,
			`leasehold_keeper_mode_switches_total{from="writebehind",kind="runs",to="sync",worker="b"} 1`,
			`leasehold_store_clock_alarms_total{kind="runs",what="step",worker="a"} 0`,
		} {
			require.Contains(t, metrics, line)
		}
	})
}
