package server

import (
	"net/http"
	"time"

	"github.com/leasehold/leasehold/auth"
)

// health is GET /v1/stats/health: what the dashboard's health page draws
// — the server's store-clock watch (its alarms by kind, clears, and the
// runway cut in force), each attached worker's heartbeat mode with its
// dark-mode difference counts and clock cut, the world host's counters
// and its held worlds' load, this server's throughput ring, the store's
// connection pools and the alerts drawn from all these. All of it
// is in memory: answering costs no store call. Like GET /v1/leases it
// spans every queue, so it needs read on every queue.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if err := allow(r, auth.Read, auth.Queue, ""); err != nil {
		s.problem(w, r, err)
		return
	}
	now := s.cfg.Clock.Now()
	out := healthResponse{Workers: []workerHealth{}, Throughput: s.rate.series(now), BucketMS: ms(rateBucket)}
	out.Clock = clockHealth{
		Steps:       s.clock.steps.Load(),
		Drifts:      s.clock.drifts.Load(),
		Clears:      s.clock.cleared.Load(),
		RunwayCutMS: ms(s.clock.excess(now)),
		SkewMS:      ms(s.cfg.Timing.Skew),
	}
	out.Clock.Alarm = out.Clock.RunwayCutMS > 0
	for _, n := range s.workerNames() {
		wk := s.worker(n)
		st := wk.Stats()
		out.Workers = append(out.Workers, workerHealth{Worker: n, Mode: wk.Mode().String(),
			DarkGateDiffs: st.DarkGateDiffs, DarkStopDiffs: st.DarkStopDiffs, DarkLostDiffs: st.DarkLostDiffs,
			GateRefusals: st.GateRefuse, Lost: st.Lost, SelfStops: st.SelfStops, MaxLagMS: ms(st.MaxLag), ClockCutMS: ms(wk.ClockCut())})
	}
	if h := s.cfg.Host; h != nil {
		hh := &hostHealth{Node: h.Node(), Stats: h.Stats(), Worlds: []worldLoad{}}
		for _, wd := range h.Held() {
			if ld, ok := h.Load(wd); ok {
				hh.Worlds = append(hh.Worlds, worldLoad{World: wd, TurnsPerSecond: ld.TurnsPerSecond, InboxDepth: ld.InboxDepth,
					TurnLatencyMS: float64(ld.TurnLatency) / float64(time.Millisecond)})
			}
		}
		out.Host = hh
	}
	out.Pools = append([]poolHealth{}, s.pools()...) // [] rather than null without pools
	out.Alerts = alerts(&out)
	writeJSON(w, out)
}
