package driver

import (
	"time"

	"github.com/leasehold/leasehold/journal"
)

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

// EntryColumns are the journal_entries columns ScanEntry reads, in order.
const EntryColumns = `world, position, epoch, kind, holder, key, payload, store_time, prev_hash, hash, signature`

// ScanEntry scans one row of EntryColumns with scan (a *sql.Rows' or
// pgx.Rows' Scan); T is the driver's type for store_time, which toTime
// converts. The entry is finished as ScannedEntry says.
func ScanEntry[T any](scan func(dest ...any) error, toTime func(T) time.Time) (journal.Entry, error) {
	var e journal.Entry
	var st T
	err := scan(&e.World, &e.Position, &e.Epoch, &e.Kind, &e.Holder, &e.Key, &e.Payload, &st, &e.PrevHash, &e.Hash, &e.Signature)
	e.StoreTime = toTime(st)
	ScannedEntry(&e)
	return e, err
}
