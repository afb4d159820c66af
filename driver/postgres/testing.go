package postgres

import "context"

// ExecForTest runs raw SQL on the general pool. It exists for tests that
// must reach under the driver (creating a caller's table for run.Tx);
// applications have no use for it.
func ExecForTest(ctx context.Context, d *Driver, query string) error {
	_, err := d.s.general.Exec(ctx, query)
	return err
}

// QueryForTest runs a one-row query on the general pool and scans it, for
// the conformance suite run from outside this package (the cross-store
// comparison of driver/drivertest) and the differential fuzzer
// (internal/difftest).
func QueryForTest(ctx context.Context, d *Driver, query string, dest ...any) error {
	return d.s.general.QueryRow(ctx, query).Scan(dest...)
}
