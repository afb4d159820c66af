package driver

import (
	"context"

	"github.com/leasehold/leasehold/runs"
)

// RunLister is the operator's view of the runs table: pages of runs for
// listings (the API's GET /v1/runs, the CLI). It is apart from RunStore
// because nothing of the engine needs it: the scheduler, the reclaimer
// and the simulator's stores implement RunStore alone.
type RunLister interface {
	// RunList returns up to p.Limit runs with id > p.AfterID, ascending
	// by id, of p.Queue and in p.State when set: cursor pagination by id,
	// which never skips or repeats a run however the table changes
	// between pages.
	RunList(ctx context.Context, p *RunListParams) ([]*Run, error)
	// RunCounts counts the runs by queue and state, ordered by queue then
	// state: the dashboard's and the CLI's summary. It reads the whole
	// table (one grouped scan), so it is for an operator's page, not for
	// a hot path.
	RunCounts(ctx context.Context) ([]RunCount, error)
}

// MaxRunListLimit bounds one RunList page.
const MaxRunListLimit = 1000

// RunListParams is one page of runs: after the cursor AfterID (0 for the
// first page), at most Limit (<= 0 means 100), optionally of one queue
// and in one state.
type RunListParams struct {
	Queue   string     // "" for every queue
	State   runs.State // "" for every state
	AfterID int64
	Limit   int
}

// RunCount is how many runs of one queue are in one state.
type RunCount struct {
	Queue string
	State runs.State
	N     int64
}
