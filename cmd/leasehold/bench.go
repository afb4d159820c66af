package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/bench"
)

// runBenchJournal is `leasehold bench [journal]`: appends per second
// beside the raw fsync rate, on SQLite and Postgres.
func runBenchJournal(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	dir := fs.String("dir", ".", "directory for the SQLite file and the raw fsync probe (the disk measured)")
	pgURL := fs.String("postgres", defaultBenchPostgres(), `Postgres URL ("none" to skip); a throwaway schema is created and dropped`)
	dur := fs.Duration("duration", 3*time.Second, "time per configuration")
	appenders := fs.String("appenders", "1,16", "comma-separated concurrent appender counts")
	cmd.RunE = a.action(func(ctx context.Context, _ []string, out io.Writer) error {
		var ns []int
		for _, s := range strings.Split(*appenders, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 || n > 1024 {
				return usagef("--appenders: %q is not a count in 1..1024", s)
			}
			ns = append(ns, n)
		}
		sort.Ints(ns)
		absDir, _ := filepath.Abs(*dir)
		steps := 3
		if *pgURL == "none" {
			steps = 2
		}
		bar, out := a.phases(out, "bench journal", steps)
		defer endBar(bar)
		bar.Describe("bench journal: raw fsync")
		fmt.Fprintf(out, "leasehold bench journal — %s, duration %s per configuration\n", time.Now().UTC().Format(time.RFC3339), *dur)

		fmt.Fprintf(out, "\n[1/3] raw write(4 KiB)+fdatasync in %s ...\n", absDir)
		fsync, n, err := bench.RawFsync(*dir, *dur)
		if err != nil {
			return fmt.Errorf("fsync probe: %w", err)
		}
		fmt.Fprintf(out, "      %d fdatasyncs: %s each, %.0f/s\n", n, fsync, 1/fsync.Seconds())

		_ = bar.Add(1)
		bar.Describe("bench journal: sqlite")
		fmt.Fprintf(out, "\n[2/3] SQLite (embedded, in-process: no network round trip)\n")
		sdir, err := os.MkdirTemp(*dir, "leasehold-bench-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(sdir)
		sfloor, err := bench.SQLiteMinimalCommit(ctx, sdir, time.Second)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "      the store's own floor, a one-row INSERT commit (no Leasehold code): %s\n", sfloor.Round(time.Microsecond))
		sd, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(sdir, "bench.db")})
		if err != nil {
			return err
		}
		defer sd.Close()
		if err := benchDriver(ctx, out, sd, ns, *dur, fsync, 0, sfloor); err != nil {
			return err
		}

		_ = bar.Add(1)
		if *pgURL == "none" {
			fmt.Fprintf(out, "\n[3/3] Postgres skipped (--postgres none)\n")
			return nil
		}
		bar.Describe("bench journal: postgres")
		fmt.Fprintf(out, "\n[3/3] Postgres\n")
		schema := fmt.Sprintf("lh_bench_%d", time.Now().UnixNano())
		admin, err := pgx.Connect(ctx, *pgURL)
		if err != nil {
			return fmt.Errorf("postgres: %w (use --postgres none to skip)", err)
		}
		defer admin.Close(context.Background())
		if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
			return err
		}
		defer admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		rt, err := bench.PostgresRoundTrip(ctx, *pgURL, time.Second)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "      round trip (SELECT 1): %s\n", rt.Round(time.Microsecond))
		pfloor, err := bench.PostgresMinimalCommit(ctx, *pgURL, schema, time.Second)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "      the store's own floor, a one-row autocommit INSERT (no Leasehold code): %s\n", pfloor.Round(time.Microsecond))
		pd, err := postgres.Open(ctx, postgres.Config{URL: *pgURL, Schema: schema})
		if err != nil {
			return err
		}
		defer pd.Close()
		if err := benchDriver(ctx, out, pd, ns, *dur, fsync, rt, pfloor); err != nil {
			return err
		}
		_ = bar.Add(1)
		return nil
	})
}

func defaultBenchPostgres() string {
	if u := os.Getenv("LEASEHOLD_DATABASE_URL"); strings.HasPrefix(u, "postgres") {
		return u
	}
	if u := os.Getenv("LEASEHOLD_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

func benchDriver(ctx context.Context, out io.Writer, d driver.Driver, ns []int, dur, fsync, rt, floor time.Duration) error {
	if _, err := d.Migrate(ctx); err != nil {
		return err
	}
	s, err := d.Settings(ctx)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(s.Values))
	for k := range s.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+s.Values[k])
	}
	fmt.Fprintf(out, "      durability: %s\n", strings.Join(parts, " "))
	fmt.Fprintf(out, "      %-10s %12s %10s %10s %10s %10s\n", "appenders", "appends/s", "batch", "mean", "p50", "p99")
	var base bench.AppendResult
	for i, n := range ns {
		r, err := bench.Appends(ctx, d, fmt.Sprintf("bench-%d-%d", n, time.Now().UnixNano()), n, dur)
		if err != nil {
			return err
		}
		if i == 0 {
			base = r
		}
		fmt.Fprintf(out, "      %-10d %12.0f %10.1f %10s %10s %10s\n", n, r.PerSecond(), r.MeanBatch(),
			r.Mean().Round(time.Microsecond), r.Quantile(0.5).Round(time.Microsecond), r.Quantile(0.99).Round(time.Microsecond))
		if i > 0 {
			fmt.Fprintf(out, "      ratio %d/%d appenders: %.1fx throughput (target >= 4x), mean batch %.1f (target >= 8)\n",
				n, base.Appenders, r.PerSecond()/base.PerSecond(), r.MeanBatch())
		}
	}
	if base.Appenders == 1 {
		target := fsync + rt
		fmt.Fprintf(out, "      single appender: mean latency %s = %.2fx of one fsync + one round trip (%s) (target <= 1.3x); %.2fx of the store's own one-row commit (%s)\n",
			base.Mean().Round(time.Microsecond), float64(base.Mean())/float64(target), target.Round(time.Microsecond),
			float64(base.Mean())/float64(floor), floor.Round(time.Microsecond))
	}
	return nil
}
