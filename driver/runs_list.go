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
// first page), at most Limit (<= 0 means 100), optionally of one queue,
// in one state, held by one owner, or with one unique key.
type RunListParams struct {
	Queue string     // "" for every queue
	State runs.State // "" for every state
	// Owner selects the runs the owner holds now: a run's owner is ""
	// unless it is running, so these are running runs, and the stores read
	// them through an index of running runs, never the whole table.
	Owner string
	// UniqueKey selects the runs that hold this unique key now — the run
	// a second enqueue with the key would answer (one per period bucket)
	// — read through the unique-key index. A run in a state that freed
	// its key (by default failed or cancelled) no longer holds it and is
	// not found: the index has no entry for it, and a search that found
	// it would have to read the whole table.
	UniqueKey string
	AfterID   int64
	Limit     int
}

// RunCount is how many runs of one queue are in one state.
type RunCount struct {
	Queue string
	State runs.State
	N     int64
}
