package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	appenders := fs.String("appenders", "1,16", "comma-separated concurrent appender counts (the first is the base of the throughput ratios)")
	rounds := fs.Int("rounds", 3, "rounds of floor, then each appender count, in turn (median and worst are printed)")
	cmd.RunE = a.action(func(ctx context.Context, _ []string, out io.Writer) error {
		if *rounds < 1 || *rounds > 100 {
			return usagef("--rounds: %d is not a count in 1..100", *rounds)
		}
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
		fmt.Fprintf(out, "leasehold bench journal — %s, %d rounds, duration %s per configuration per round, load average %s\n",
			time.Now().UTC().Format(time.RFC3339), *rounds, *dur, loadAverage())

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
		sfloor, err := bench.OpenSQLiteFloor(ctx, sdir)
		if err != nil {
			return err
		}
		defer sfloor.Close()
		fmt.Fprintf(out, "      floor: the store's own one-row INSERT commit, prepared (no Leasehold code)\n")
		sd, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(sdir, "bench.db")})
		if err != nil {
			return err
		}
		defer sd.Close()
		swal := []string{filepath.Join(sdir, "floor.db-wal"), filepath.Join(sdir, "bench.db-wal")}
		if err := benchDriver(ctx, out, benchStore{d: sd, floor: sfloor, walFiles: swal}, ns, *rounds, *dur); err != nil {
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
		pfloor, err := bench.OpenPostgresFloor(ctx, *pgURL, schema)
		if err != nil {
			return err
		}
		defer pfloor.Close()
		fmt.Fprintf(out, "      floor: the store's own one-row autocommit INSERT, synchronous_commit on (no Leasehold code)\n")
		pd, err := postgres.Open(ctx, postgres.Config{URL: *pgURL, Schema: schema})
		if err != nil {
			return err
		}
		defer pd.Close()
		if err := benchDriver(ctx, out, benchStore{d: pd, floor: pfloor, walLSN: func() (int64, error) {
			var lsn int64
			err := admin.QueryRow(ctx, "SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint").Scan(&lsn)
			return lsn, err
		}}, ns, *rounds, *dur); err != nil {
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

// benchStore is one store under `bench journal`: its driver, its own
// one-row commit, and (Postgres) the server's WAL position, read around
// each slice to count WAL bytes per commit. The server's WAL is shared
// with every other session, so the count is an upper bound; the least
// over the rounds is the one least disturbed.
type benchStore struct {
	d      driver.Driver
	floor  *bench.Floor
	walLSN func() (int64, error) // nil: not counted (SQLite)
	// walFiles are the floor's and the driver's SQLite WAL files, which
	// the warm-up lets reach their size (nil: Postgres, whose WAL
	// segments the server preallocates and recycles).
	walFiles []string
}

// benchSlice is one measured slice: latencies, CPU and WAL per op.
type benchSlice struct {
	r   bench.AppendResult
	wal float64 // WAL bytes per commit or append; -1 when not counted
}

func (s benchStore) slice(run func() (bench.AppendResult, error)) (benchSlice, error) {
	var l0 int64
	if s.walLSN != nil {
		var err error
		if l0, err = s.walLSN(); err != nil {
			return benchSlice{}, err
		}
	}
	r, err := run()
	if err != nil {
		return benchSlice{}, err
	}
	out := benchSlice{r: r, wal: -1}
	if s.walLSN != nil {
		l1, err := s.walLSN()
		if err != nil {
			return benchSlice{}, err
		}
		out.wal = float64(l1-l0) / float64(max(r.Appends, 1))
	}
	return out, nil
}

// benchDriver measures, round after round, the store's own one-row commit
// and then each appender count, so the single append's ratio to the floor
// (Must-show 4: <= 1.3x) and the throughput of many appenders against the
// first count (>= 4x) come from the same minutes of the same machine.
func benchDriver(ctx context.Context, out io.Writer, s benchStore, ns []int, rounds int, dur time.Duration) error {
	if _, err := s.d.Migrate(ctx); err != nil {
		return err
	}
	st, err := s.d.Settings(ctx)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(st.Values))
	for k := range st.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+st.Values[k])
	}
	fmt.Fprintf(out, "      durability: %s\n", strings.Join(parts, " "))
	us := func(d time.Duration) string { return d.Round(time.Microsecond).String() }
	wal := func(b float64) string {
		if b < 0 {
			return "-"
		}
		return fmt.Sprintf("%.0fB", b)
	}
	if err := s.warm(ctx, out, dur); err != nil {
		return err
	}
	fmt.Fprintf(out, "      %-5s %-5s %-8s %9s %9s %7s %7s\n", "round", "load", "what", "p50", "mean", "cpu/op", "wal/op")
	var ratioP50, ratioMean []float64
	thr := make([][]float64, len(ns))
	for round := 1; round <= rounds; round++ {
		load := loadAverage1()
		f, err := s.slice(func() (bench.AppendResult, error) { return s.floor.Measure(dur) })
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "      %-5d %-5s %-8s %9s %9s %7s %7s\n", round, load, "floor", us(f.r.Quantile(0.5)), us(f.r.Mean()),
			us(f.r.CPUPerAppend()), wal(f.wal))
		var base bench.AppendResult
		for i, n := range ns {
			a, err := s.slice(func() (bench.AppendResult, error) {
				return bench.Appends(ctx, s.d, fmt.Sprintf("bench-%d-%d", n, time.Now().UnixNano()), n, dur)
			})
			if err != nil {
				return err
			}
			what := fmt.Sprintf("%d app.", n)
			fmt.Fprintf(out, "      %-5s %-5s %-8s %9s %9s %7s %7s  %6.0f/s batch %.1f", "", "", what, us(a.r.Quantile(0.5)), us(a.r.Mean()),
				us(a.r.CPUPerAppend()), wal(a.wal), a.r.PerSecond(), a.r.MeanBatch())
			if i == 0 {
				base = a.r
				rp, rm := float64(a.r.Quantile(0.5))/float64(f.r.Quantile(0.5)), float64(a.r.Mean())/float64(f.r.Mean())
				ratioP50, ratioMean = append(ratioP50, rp), append(ratioMean, rm)
				fmt.Fprintf(out, "  vs floor: p50 %.2fx mean %.2fx\n", rp, rm)
				continue
			}
			x := a.r.PerSecond() / base.PerSecond()
			thr[i] = append(thr[i], x)
			fmt.Fprintf(out, "  %.1fx %d app.\n", x, base.Appenders)
		}
	}
	fmt.Fprintf(out, "      over %d rounds (load average now %s):\n", rounds, loadAverage())
	if ns[0] == 1 {
		fmt.Fprintf(out, "      single append / store's one-row commit: p50 median %.2fx worst %.2fx; mean median %.2fx worst %.2fx (target <= 1.3x)\n",
			median(ratioP50), slices.Max(ratioP50), median(ratioMean), slices.Max(ratioMean))
	}
	for i, n := range ns[1:] {
		fmt.Fprintf(out, "      %d appenders / %d: throughput median %.1fx worst %.1fx (target >= 4x)\n",
			n, ns[0], median(thr[i+1]), slices.Min(thr[i+1]))
	}
	return nil
}

// warmUpChunks bounds the warm-up: at most this many slices of a quarter
// of the measuring duration each, per side.
const warmUpChunks = 40

// warm brings the floor and the single appender to their steady state
// before the rounds, unmeasured: a store opened fresh writes into a WAL
// file that is still growing (SQLite extends -wal page by page until its
// first checkpoint reset, the driver's at 10,000 pages, the floor's at
// SQLite's default 1,000), and extending a file costs every commit more
// than overwriting it does. A server that has run a while has its WAL at
// its size, so that is what the ratio compares, for both sides alike.
// On SQLite each side runs in slices until its WAL file did not grow
// during a slice; on Postgres one slice each (plans prepared, pools
// filled).
func (s benchStore) warm(ctx context.Context, out io.Writer, dur time.Duration) error {
	chunk := max(dur/4, 100*time.Millisecond)
	sides := []struct {
		name string
		run  func() (bench.AppendResult, error)
		wal  string
	}{
		{"floor", func() (bench.AppendResult, error) { return s.floor.Measure(chunk) }, ""},
		{"1 app.", func() (bench.AppendResult, error) {
			return bench.Appends(ctx, s.d, fmt.Sprintf("warm-%d", time.Now().UnixNano()), 1, chunk)
		}, ""},
	}
	if len(s.walFiles) == 2 {
		sides[0].wal, sides[1].wal = s.walFiles[0], s.walFiles[1]
	}
	var parts []string
	for _, side := range sides {
		var ops int64
		size := walSize(side.wal)
		for i := 0; i < warmUpChunks; i++ {
			r, err := side.run()
			if err != nil {
				return fmt.Errorf("warm-up (%s): %w", side.name, err)
			}
			ops += r.Appends
			now := walSize(side.wal)
			if side.wal == "" || (now == size && now > 0) {
				break
			}
			size = now
		}
		p := fmt.Sprintf("%s %d commits", side.name, ops)
		if side.wal != "" {
			p += fmt.Sprintf(" (WAL file %.1f MiB)", float64(walSize(side.wal))/(1<<20))
		}
		parts = append(parts, p)
	}
	fmt.Fprintf(out, "      warm-up, not measured: %s\n", strings.Join(parts, ", "))
	return nil
}

// walSize is the size of a WAL file, 0 when there is none (or no name).
func walSize(path string) int64 {
	if path == "" {
		return 0
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// loadAverage1 is the one-minute load average.
func loadAverage1() string { return strings.Fields(loadAverage() + " ?")[0] }
