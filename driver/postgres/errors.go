package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leasehold/leasehold/driver"
)

// isUniqueViolation reports a primary key or unique constraint failure
// (SQLSTATE 23505), which the drivers map to driver.ErrConflict.
func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// mapWriteError maps a unique violation to driver.ErrConflict, keeping the
// server's message (it names the constraint and key).
func mapWriteError(err error) error {
	if isUniqueViolation(err) {
		return fmt.Errorf("%w: %w", err, driver.ErrConflict)
	}
	return err
}

// isNoData reports the no_data_found (P0002) that leasehold_journal_append
// raises for a world that does not exist.
func isNoData(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "P0002"
}

// isServerTimeout reports lock_timeout (55P03) or statement_timeout (57014)
// firing on the server.
func isServerTimeout(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "55P03" || pe.Code == "57014")
}

// MissingSchema implements driver.SchemaErrors: an undefined table,
// column or function (SQLSTATE 42P01, 42703, 42883) is a schema nobody
// migrated, or an older binary did — every one the driver names is made
// by its migrations.
func (d *store) MissingSchema(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "42P01", "42703", "42883":
		return true
	}
	return false
}
