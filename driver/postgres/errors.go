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
