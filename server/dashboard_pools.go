package server

import (
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// The store's connection pools and the alerts on the health page: both
// read from memory (driver.PoolReporter's counters, the store-clock
// watch's, the attached workers'), so GET /v1/stats/health still costs
// the store no query.

// poolHealth is one pool as `leasehold doctor` prints it, with its
// saturation: the share of its connections in use now.
type poolHealth struct {
	Name          string  `json:"name"`
	Max           int32   `json:"max"`
	Open          int32   `json:"open"`
	InUse         int32   `json:"in_use"`
	Idle          int32   `json:"idle"`
	Acquires      int64   `json:"acquires"`
	Waited        int64   `json:"waited"`    // acquires that found no idle connection
	Cancelled     int64   `json:"cancelled"` // acquires given up
	MeanAcquireMS float64 `json:"mean_acquire_ms"`
	Saturation    float64 `json:"saturation"` // in_use / max, 0..1
}

// alert is one thing on the health page a person should look at.
// Level "alarm" is in force now; "warn" happened since the server started.
type alert struct {
	Level  string `json:"level"`
	What   string `json:"what"`
	Detail string `json:"detail"`
}

// pools reads the store's pools; nil for a store without (SQLite).
func (s *Server) pools() []poolHealth {
	pr, ok := s.d.(driver.PoolReporter)
	if !ok {
		return nil
	}
	var out []poolHealth
	for _, p := range pr.PoolStats() {
		h := poolHealth{Name: p.Name, Max: p.Max, Open: p.Open, InUse: p.InUse, Idle: p.Idle,
			Acquires: p.Acquires, Waited: p.Waited, Cancelled: p.Cancelled}
		if p.Acquires > 0 {
			h.MeanAcquireMS = fms(p.AcquireWaitTotal / time.Duration(p.Acquires))
		}
		if p.Max > 0 {
			h.Saturation = float64(p.InUse) / float64(p.Max)
		}
		out = append(out, h)
	}
	return out
}

// alerts derives the health page's alerts from its figures: the store
// clock's alarm in force and those raised since start, each worker's
// clock cut, a pool with every connection in use or acquires given up.
// (The watch keeps counts, not a history of each alarm: the log has
// those, with their sizes.)
func alerts(h *healthResponse) []alert {
	out := []alert{}
	c := h.Clock
	if c.Alarm {
		out = append(out, alert{"alarm", "store clock", fmt.Sprintf("moved beyond S within one term: the runway this server vouches for is cut by %s", msd(c.RunwayCutMS))})
	}
	if c.Steps+c.Drifts > 0 {
		out = append(out, alert{"warn", "store clock", fmt.Sprintf("%d step and %d drift alarms since start, %d cleared", c.Steps, c.Drifts, c.Clears)})
	}
	for _, w := range h.Workers {
		if w.ClockCutMS > 0 {
			out = append(out, alert{"alarm", "worker " + w.Worker, fmt.Sprintf("its store-clock watch cuts its runway by %s", msd(w.ClockCutMS))})
		}
	}
	for _, p := range h.Pools {
		if p.Max > 0 && p.InUse >= p.Max {
			out = append(out, alert{"alarm", "pool " + p.Name, fmt.Sprintf("saturated: all %d connections in use", p.Max)})
		}
		if p.Cancelled > 0 {
			out = append(out, alert{"warn", "pool " + p.Name, fmt.Sprintf("%d acquires given up waiting for a connection since start", p.Cancelled)})
		}
	}
	return out
}

func fms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func msd(ms int64) string         { return (time.Duration(ms) * time.Millisecond).String() }
