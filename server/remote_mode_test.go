package server_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/server"
)

// modeBundle is a server over a counting store (writebehind_test.go) whose
// clock is a fake one, so each drain runs when the test moves it.
type modeBundle struct {
	*testBundle
	cd  *countingDriver
	clk *clock.Fake
}

func setupModes(t *testing.T, open func(t *testing.T) leasehold.Driver, scfg server.Config) *modeBundle {
	cd := &countingDriver{drained: make(chan int, 64)}
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	scfg.Timing, scfg.Clock = longLeases, clk
	b := setup(t, func(t *testing.T) leasehold.Driver { cd.Driver = open(t); return cd }, leasehold.Config{}, scfg)
	return &modeBundle{testBundle: b, cd: cd, clk: clk}
}

// drainPass moves the server's clock one T_drain and waits until its
// drain has run: for the statement when one is due (it answers the rows
// renewed), else for the drain loop to wait on its next timer — the pass
// is over and issued nothing (-1).
func (m *modeBundle) drainPass(t *testing.T, expectStatement bool) int {
	t.Helper()
	m.clk.BlockUntil(1) // the drain waits on its timer
	m.clk.Advance(longLeases.Drain)
	if expectStatement {
		return <-m.cd.drained
	}
	m.clk.BlockUntil(1) // back on its timer: the pass ended
	require.Empty(t, m.cd.drained, "the pass issued a statement")
	return -1
}

// renewAll renews each held run once as its owner and returns how each
// renewal was made.
func (m *modeBundle) renewAll(t *testing.T, held []run) []string {
	t.Helper()
	var how []string
	for _, h := range held {
		var got struct {
			RunwayMS int64  `json:"runway_ms"`
			Renewal  string `json:"renewal"`
		}
		m.post(t, runPath(h.ID, "/renew"), map[string]any{"fence": h.Fence, "owner": h.Owner}).ok(t, &got)
		require.Positive(t, got.RunwayMS, "%+v", got)
		how = append(how, got.Renewal)
	}
	return how
}

// TestRemoteRenewalsHonourTheHeartbeatMode: the heartbeat statements of
// three remote runners renewing once per T_drain, per mode, set for all
// remote runners (worker "remote-holders") or for each runner
// ("remote:<owner>"), on each store:
//
//	writebehind: 0 synchronous renewals, 1 drain renewing 3 rows
//	sync:        3 synchronous renewals (before each answer), no drain statement
//	dark:        3 synchronous renewals and 1 drain renewing 3 rows
func TestRemoteRenewalsHonourTheHeartbeatMode(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		for _, via := range []string{"remote-holders", "remote:<owner>"} {
			for _, tc := range []struct {
				mode    string
				renews  int64
				drained int
			}{{"writebehind", 0, 3}, {"sync", 3, -1}, {"dark", 3, 3}} {
				t.Run(via+"/"+tc.mode, func(t *testing.T) {
					m := setupModes(t, open, server.Config{})
					var held []run
					for i := range 3 {
						m.enqueue(t, "q", `{}`)
						held = append(held, m.claimOne(t, "q", fmt.Sprintf("runner-%d", i)))
					}
					var l server.ModeList
					if via == "remote-holders" {
						m.post(t, "/v1/admin/mode", map[string]any{"mode": tc.mode, "worker": "remote-holders"}).ok(t, &l)
					} else {
						for _, h := range held {
							m.post(t, "/v1/admin/mode", map[string]any{"mode": tc.mode, "worker": "remote:" + h.Owner}).ok(t, &l)
						}
					}
					require.Equal(t, tc.mode, l.Workers[0].Mode)
					require.Equal(t, "writebehind", l.Workers[0].Previous)

					for round := range 2 {
						before := m.cd.renews.Load()
						how := m.renewAll(t, held)
						require.Equal(t, []string{tc.mode, tc.mode, tc.mode}, how)
						require.Equal(t, tc.renews, m.cd.renews.Load()-before, "round %d: synchronous renewals", round)
						require.Equal(t, tc.drained, m.drainPass(t, tc.drained >= 0), "round %d: the drain", round)
					}
				})
			}
		}
	})
}

// TestDarkRemoteRenewalsKeepTheSyncPathAuthoritative: in dark mode a
// remote renewal is written before the answer, so a cancelled run's next
// renewal is refused at once (write-behind would have answered it from
// memory); a lease the drain finds lost is not given up by the drain but
// counted as a dark difference, and the synchronous path meets the
// refusal. The switches show on /metrics under worker="remote-holders".
func TestDarkRemoteRenewalsKeepTheSyncPathAuthoritative(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		m := setupModes(t, open, server.Config{RemoteMode: leasehold.ModeDark})
		var l server.ModeList
		m.get(t, "/v1/admin/mode").ok(t, &l)
		require.Equal(t, []server.WorkerMode{{Worker: "remote-holders", Mode: "dark"}}, l.Workers, "started dark from the configuration")

		m.enqueue(t, "q", `{}`)
		m.enqueue(t, "q", `{}`)
		a, b := m.claimOne(t, "q", "runner-a"), m.claimOne(t, "q", "runner-b")
		require.Equal(t, []string{"dark", "dark"}, m.renewAll(t, []run{a, b}))

		// b is cancelled after its dark renewal marked it for the drain:
		// the drain finds it lost, counts the difference, gives nothing up.
		m.post(t, runPath(b.ID, "/cancel"), map[string]any{"reason": "operator"}).ok(t, &struct{}{})
		require.Equal(t, 1, m.drainPass(t, true), "the drain renewed a and found b lost")
		before := m.snapshot(t, b.ID)
		renews := m.cd.renews.Load()
		m.post(t, runPath(b.ID, "/renew"), map[string]any{"fence": b.Fence, "owner": "runner-b"}).problem(t, "fenced")
		require.Equal(t, renews+1, m.cd.renews.Load(), "the refusal was the synchronous renewal's")
		require.Equal(t, before, m.snapshot(t, b.ID))

		// A cancelled run's first renewal in dark is refused at once; in
		// writebehind it is answered from memory.
		m.enqueue(t, "q", `{}`)
		c := m.claimOne(t, "q", "runner-c")
		m.post(t, runPath(c.ID, "/cancel"), map[string]any{"reason": "operator"}).ok(t, &struct{}{})
		m.post(t, runPath(c.ID, "/renew"), map[string]any{"fence": c.Fence, "owner": "runner-c"}).problem(t, "fenced")

		m.post(t, "/v1/admin/mode", map[string]any{"mode": "writebehind", "all": true}).ok(t, &l)
		require.Equal(t, []server.WorkerMode{{Worker: "remote-holders", Mode: "writebehind", Previous: "dark"}}, l.Workers)
		m.post(t, "/v1/admin/mode", map[string]any{"mode": "sync", "worker": "remote:runner-a"}).ok(t, &l)
		l = server.ModeList{} // decoding into a used slice keeps absent fields
		m.get(t, "/v1/admin/mode").ok(t, &l)
		require.Equal(t, []server.WorkerMode{{Worker: "remote-holders", Mode: "writebehind"}, {Worker: "remote:runner-a", Mode: "sync"}}, l.Workers)
		require.Equal(t, []string{"sync"}, m.renewAll(t, []run{a}), "runner-a's own mode")

		metrics := string(m.get(t, "/metrics").body)
		for _, line := range []string{
			`leasehold_keeper_dark_diffs_total{decision="lost",kind="remote runs",worker="remote-holders"} 1`,
			`leasehold_keeper_mode_switches_total{from="dark",kind="remote runs",to="writebehind",worker="remote-holders"} 1`,
			`leasehold_remote_renewals_total{path="dark"} 2`,
			`leasehold_remote_renewals_total{path="sync"} 1`,
		} {
			require.Contains(t, metrics, line)
		}

		for name, body := range map[string]string{
			"bad owner":  `{"mode":"sync","worker":"remote:bad owner"}`,
			"no owner":   `{"mode":"sync","worker":"remote:"}`,
			"bad mode":   `{"mode":"fast","worker":"remote-holders"}`,
			"both names": `{"mode":"sync","worker":"remote-holders","all":true}`,
		} {
			r := m.do(t, http.MethodPost, "/v1/admin/mode", []byte(body))
			require.Equal(t, http.StatusBadRequest, r.status, name)
			r.problem(t, "invalid")
		}
		w, err := m.c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"q": 1}})
		require.NoError(t, err)
		require.ErrorIs(t, m.s.AttachWorker("remote-holders", w), leasehold.ErrInvalid)
		require.ErrorIs(t, m.s.AttachWorker("remote:x", w), leasehold.ErrInvalid)
	})
}
