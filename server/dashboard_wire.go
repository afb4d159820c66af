package server

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
