package sqlite

import "context"

// ExecForTest runs raw SQL on the writer connection. It exists for the
// conformance suite's cases that must reach under the driver; applications
// have no use for it.
func ExecForTest(ctx context.Context, d *Driver, query string) error {
	_, err := d.s.w.ExecContext(ctx, query)
	return err
}

// QueryForTest runs a one-row query on the read pool and scans it, for the
// conformance suite.
func QueryForTest(ctx context.Context, d *Driver, query string, dest ...any) error {
	return d.s.r.QueryRowContext(ctx, query).Scan(dest...)
}
