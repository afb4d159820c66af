package server

import "github.com/leasehold/leasehold/host"

// The JSON shapes of the dashboard's read-only endpoints (dashboard_api.go).

type whoamiResponse struct {
	TokenID string   `json:"token_id"`
	Scopes  []string `json:"scopes"`
	May     struct {
		Read  bool `json:"read"`
		Work  bool `json:"work"`
		Admin bool `json:"admin"`
	} `json:"may"`
}

type runCountBody struct {
	Queue string `json:"queue"`
	State string `json:"state"`
	N     int64  `json:"n"`
}

type runStatsResponse struct {
	Counts []runCountBody `json:"counts"`
	AsOf   string         `json:"as_of"` // when the counts were read (they may be cached)
}

// timingBody is the lease timing a runway is measured against;
// MaxRunwayMS is a fresh lease's runway (T_lease - S), the full bar.
type timingBody struct {
	LeaseMS     int64 `json:"lease_ms"`
	SkewMS      int64 `json:"skew_ms"`
	StopMS      int64 `json:"stop_ms"`
	DrainMS     int64 `json:"drain_ms"`
	RenewMS     int64 `json:"renew_ms"`
	MaxRunwayMS int64 `json:"max_runway_ms"`
}

// leaseBody is one lease the server vouches for: its runway, what the
// gate may count on (min(runway, D_stop - lag)) and the durable lag (the
// time since the send of its last confirmed write).
type leaseBody struct {
	RunID       int64  `json:"run_id"`
	Fence       int64  `json:"fence"`
	Owner       string `json:"owner"`
	RunwayMS    int64  `json:"runway_ms"`
	AvailableMS int64  `json:"available_ms"`
	LagMS       int64  `json:"lag_ms"`
}

type leasesResponse struct {
	Timing timingBody  `json:"timing"`
	Leases []leaseBody `json:"leases"`
	Total  int         `json:"total"`
}

type worldsPage struct {
	Worlds []worldBody `json:"worlds"`
	Next   string      `json:"next,omitempty"`
}

type spanBody struct {
	Epoch  int64  `json:"epoch"`
	Holder string `json:"holder"`
	From   int64  `json:"from"`
	To     int64  `json:"to"`
}

type violationBody struct {
	Position int64  `json:"position"`
	Rule     string `json:"rule"`
	Detail   string `json:"detail"`
}

type auditResponse struct {
	World      string         `json:"world"`
	Entries    int64          `json:"entries"`
	OK         bool           `json:"ok"`
	Spans      []spanBody     `json:"spans"`
	Violation  *violationBody `json:"violation,omitempty"`
	Signatures int64          `json:"signatures"`
	Signed     int64          `json:"signed"`
}

// healthResponse is GET /v1/stats/health (dashboard_health.go).
type healthResponse struct {
	Clock      clockHealth    `json:"clock"`
	Workers    []workerHealth `json:"workers"`
	Host       *hostHealth    `json:"host,omitempty"` // absent: no world host in this server
	Throughput []rateSample   `json:"throughput"`     // oldest first, one per bucket_ms, the last still filling
	BucketMS   int64          `json:"bucket_ms"`
	Pools      []poolHealth   `json:"pools"`  // empty: the store has none (SQLite)
	Alerts     []alert        `json:"alerts"` // dashboard_pools.go
}

// clockHealth is the server's store-clock watch: alarms raised by kind
// (a step, a drift beyond S within one term), alarms cleared, and the
// runway cut in force now (Alarm while it is above 0).
type clockHealth struct {
	Steps       int64 `json:"steps"`
	Drifts      int64 `json:"drifts"`
	Clears      int64 `json:"clears"`
	Alarm       bool  `json:"alarm"`
	RunwayCutMS int64 `json:"runway_cut_ms"`
	SkewMS      int64 `json:"skew_ms"`
}

// workerHealth is one attached worker: its heartbeat mode and, in dark
// mode, how often write-behind would have decided otherwise.
type workerHealth struct {
	Worker        string `json:"worker"`
	Mode          string `json:"mode"`
	DarkGateDiffs uint64 `json:"dark_gate_diffs"`
	DarkStopDiffs uint64 `json:"dark_stop_diffs"`
	DarkLostDiffs uint64 `json:"dark_lost_diffs"`
	GateRefusals  uint64 `json:"gate_refusals"`
	Lost          uint64 `json:"lost"`
	SelfStops     uint64 `json:"self_stops"`
	MaxLagMS      int64  `json:"max_lag_ms"`
	ClockCutMS    int64  `json:"clock_cut_ms"`
}

type hostHealth struct {
	Node   string      `json:"node"`
	Stats  host.Stats  `json:"stats"`
	Worlds []worldLoad `json:"worlds"` // the worlds held here, with their load
}

// worldLoad is a held world's load: what the hot-world band judges.
type worldLoad struct {
	World          string  `json:"world"`
	TurnsPerSecond float64 `json:"turns_per_second"`
	InboxDepth     int     `json:"inbox_depth"`
	TurnLatencyMS  float64 `json:"turn_latency_ms"`
}
