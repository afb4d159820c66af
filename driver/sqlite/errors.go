package sqlite

import (
	"errors"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

func errorsJoin(errs ...error) error { return errors.Join(errs...) }

// isUniqueViolationModernc reports a primary key or unique constraint failure,
// which the drivers map to driver.ErrConflict.
func isUniqueViolationModernc(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			return true
		}
	}
	return false
}

// isBusyModernc reports SQLITE_BUSY (any extended code): the file is locked by
// another connection in a way the busy handler does not wait out — a
// connection closing the last handle checkpoints and removes the WAL under
// an exclusive lock, and one opening then is answered BUSY at once.
func isBusyModernc(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// MissingSchema implements driver.SchemaErrors: "no such table" (or a
// column a later migration adds) is a store nobody migrated, or migrated
// by an older binary.
func (d *store) MissingSchema(err error) bool { return d.eng.IsMissingSchema(err) }

func missingSchemaModernc(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Code() != sqlite3.SQLITE_ERROR {
		return false
	}
	msg := se.Error()
	return strings.Contains(msg, "no such table") || strings.Contains(msg, "no such column")
}
