package sqlite

import "github.com/leasehold/leasehold/driver"

// Driver is the SQLite store of record: its methods check their input with
// driver.Validating, then run the store's SQL. Open returns it.
type Driver struct {
	driver.Driver // driver.Validating(s)
	s             *store
}

func newDriver(s *store) *Driver { return &Driver{Driver: driver.Validating(s), s: s} }
