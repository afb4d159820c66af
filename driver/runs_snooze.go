package driver

import (
	"fmt"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// RunSnoozeParams snoozes a held run: back to available for Delay, its
// attempt not consumed.
type RunSnoozeParams struct {
	ID, Fence int64
	Delay     time.Duration // 0..runs.MaxDelay, from store now
	// MaxSnoozes bounds the run's snoozes over its life: a run that
	// snoozed this often already is refused (SnoozeLimitError).
	// 1..runs.MaxSnoozesLimit.
	MaxSnoozes int
}

// Class implements lease.Classed: a fenced write, like a completion.
func (*RunSnoozeParams) Class() lease.Durability { return lease.SyncCritical }

// Validate checks a snooze: identity, delay and bound.
func (p *RunSnoozeParams) Validate() error {
	if err := runs.ValidateFenced(p.ID, p.Fence); err != nil {
		return err
	}
	if err := runs.ValidateSnooze(p.Delay); err != nil {
		return err
	}
	return runs.ValidateMaxSnoozes(p.MaxSnoozes)
}

// SnoozeLimitError is a snooze refused because the run already snoozed
// Max times: nothing was written, the run is still held, and the caller
// (the worker) fails the attempt instead. It unwraps to ErrConflict.
type SnoozeLimitError struct {
	ID      int64
	Snoozes int
	Max     int
}

func (e *SnoozeLimitError) Error() string {
	return fmt.Sprintf("snooze of run %d refused: it snoozed %d times, the limit is %d", e.ID, e.Snoozes, e.Max)
}

// Unwrap returns ErrConflict.
func (e *SnoozeLimitError) Unwrap() error { return ErrConflict }

// ClassifySnoozeRefusal explains a snooze that matched no row, from the
// run as it is now: the limit if the run is still held under the fence,
// otherwise ClassifyRefusal's answer.
func ClassifySnoozeRefusal(p *RunSnoozeParams, cur *Run, now time.Time) error {
	if cur != nil && cur.Fence == p.Fence && cur.State == runs.StateRunning && cur.Snoozes >= p.MaxSnoozes {
		return &SnoozeLimitError{ID: p.ID, Snoozes: cur.Snoozes, Max: p.MaxSnoozes}
	}
	return ClassifyRefusal("snooze", p.ID, p.Fence, "", cur, now, false)
}
