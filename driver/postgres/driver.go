package postgres

import (
	"context"

	"github.com/leasehold/leasehold/driver"
)

// Driver is the Postgres store of record: its methods check their input
// with driver.Validating, then run the store's SQL. Open returns it.
type Driver struct {
	driver.Driver // driver.Validating(s)
	s             *store
}

func newDriver(s *store) *Driver { return &Driver{Driver: driver.Validating(s), s: s} }

var (
	_ driver.EventNotifier   = (*Driver)(nil)
	_ driver.JournalNotifier = (*Driver)(nil)
	_ driver.PoolReporter    = (*Driver)(nil)
)

// RunEventsNotify implements driver.EventNotifier (notify.go); it takes no
// input to validate.
func (d *Driver) RunEventsNotify(ctx context.Context) (<-chan int64, error) {
	return d.s.RunEventsNotify(ctx)
}

// JournalNotify implements driver.JournalNotifier (notify.go).
func (d *Driver) JournalNotify(ctx context.Context) (<-chan string, error) {
	return d.s.JournalNotify(ctx)
}

// PoolStats implements driver.PoolReporter.
func (d *Driver) PoolStats() []driver.PoolStat { return d.s.PoolStats() }
