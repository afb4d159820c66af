package driver

import "github.com/leasehold/leasehold/journal"

// Rows is the part of a result set (*sql.Rows, pgx.Rows) that CollectRows
// iterates; the caller closes it.
type Rows interface {
	Next() bool
	Err() error
}

// CollectRows scans every row of rows with scan, in order.
func CollectRows[T any](rows Rows, scan func() (T, error)) ([]T, error) {
	var out []T
	for rows.Next() {
		v, err := scan()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ScannedEntry finishes an entry a driver scanned: empty hashes and
// signatures read back as nil, as the journal holds them (a store gives an
// empty slice for an empty BLOB or bytea), and the store time in UTC.
func ScannedEntry(e *journal.Entry) {
	if len(e.PrevHash) == 0 {
		e.PrevHash = nil
	}
	if len(e.Signature) == 0 {
		e.Signature = nil
	}
	e.StoreTime = e.StoreTime.UTC()
}
