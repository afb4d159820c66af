package bench

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// RawFsync writes 4 KiB and fdatasyncs it in a loop, in a file in dir, for
// d; it returns the mean time of one write+fdatasync. fdatasync is what
// Postgres' default wal_sync_method and SQLite's WAL commit issue.
func RawFsync(dir string, d time.Duration) (time.Duration, int, error) {
	f, err := os.CreateTemp(dir, "fsync-probe-*")
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(filepath.Clean(f.Name()))
	defer f.Close()
	buf := make([]byte, 4096)
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		if _, err := f.WriteAt(buf, int64(n%256)*4096); err != nil {
			return 0, n, err
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return 0, n, err
		}
		n++
	}
	return time.Since(start) / time.Duration(max(n, 1)), n, nil
}

// PostgresRoundTrip returns the mean time of `SELECT 1` on one connection.
func PostgresRoundTrip(ctx context.Context, url string, d time.Duration) (time.Duration, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		var one int
		if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
			return 0, err
		}
		n++
	}
	return time.Since(start) / time.Duration(max(n, 1)), nil
}
