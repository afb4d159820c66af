package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/bench"
)

// runBenchJournalParts is `leasehold bench journal-parts`: one journal
// append's transaction built up a part at a time (head lock, conditional
// head update, entry, key index) beside the store's own one-row commit,
// then the driver's real append, on SQLite and Postgres, the steps in
// turn round after round so a loaded machine bends them alike
// (internal/bench/journal_parts.go). Each part's cost is the difference
// between two adjacent lines.
func runBenchJournalParts(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	dir := fs.String("dir", ".", "directory for the SQLite file (the disk measured)")
	pgURL := fs.String("postgres", defaultBenchPostgres(), `Postgres URL ("none" to skip); a throwaway schema`)
	rounds := fs.Int("rounds", 5, "rounds over every step")
	slice := fs.Duration("slice", 200*time.Millisecond, "time per step per round")
	cmd.RunE = a.action(func(ctx context.Context, _ []string, out io.Writer) error {
		return benchJournalParts(ctx, out, *dir, *pgURL, *rounds, *slice)
	})
}

// benchJournalParts runs `bench journal-parts` once its flags are read.
func benchJournalParts(ctx context.Context, out io.Writer, dir, pgURL string, rounds int, slice time.Duration) error {
	if rounds < 1 || rounds > 1000 || slice <= 0 || slice > time.Minute {
		return usagef("--rounds must be in 1..1000 and --slice in (0, 1m]")
	}
	cfg := bench.PartsConfig{Rounds: rounds, Slice: slice}
	fmt.Fprintf(out, "leasehold bench journal-parts — %s; %d rounds, %s per step per round\n",
		time.Now().UTC().Format(time.RFC3339), cfg.Rounds, cfg.Slice)

	sdir, err := os.MkdirTemp(dir, "leasehold-bench-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(sdir)
	path := filepath.Join(sdir, "parts.db")
	sd, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		return err
	}
	defer sd.Close()
	if _, err := sd.Migrate(ctx); err != nil {
		return err
	}
	steps, err := bench.SQLiteParts(ctx, sd, path, cfg)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	printParts(out, "sqlite (WAL, synchronous=FULL)", steps, true)

	if pgURL == "none" {
		return nil
	}
	admin, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return fmt.Errorf("postgres: %w (use --postgres none to skip)", err)
	}
	defer admin.Close(context.Background())
	schema := fmt.Sprintf("lh_bench_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return err
	}
	defer admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	pd, err := postgres.Open(ctx, postgres.Config{URL: pgURL, Schema: schema})
	if err != nil {
		return err
	}
	defer pd.Close()
	if _, err := pd.Migrate(ctx); err != nil {
		return err
	}
	steps, err = bench.PostgresParts(ctx, pd, pgURL, schema, cfg)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	printParts(out, "postgres (synchronous_commit=on; each part transaction one round trip)", steps, false)
	return nil
}

// printParts prints each step's mean, its ratio to the floor (the first
// step), its difference from the line above and its WAL — pages per
// transaction where the store counts them per step (walCounted: SQLite),
// else the bytes EXPLAIN reported for its statements (Postgres) — figures
// a loaded machine does not bend.
func printParts(out io.Writer, title string, steps []bench.PartStep, walCounted bool) {
	fmt.Fprintf(out, "\n[%s]\n  %-58s %10s %8s %10s %8s %10s\n", title, "step", "mean", "x floor", "vs above", "n", "WAL")
	floor := steps[0].Mean()
	for i, s := range steps {
		diff := ""
		if i > 0 {
			diff = (s.Mean() - steps[i-1].Mean()).Round(time.Microsecond).String()
		}
		pages := "-"
		switch {
		case walCounted:
			pages = fmt.Sprintf("%.2f", s.WALPages())
		case s.StatementWALBytes > 0:
			pages = fmt.Sprintf("%d B", s.StatementWALBytes)
		}
		fmt.Fprintf(out, "  %-58s %10s %7.2fx %10s %8d %10s\n", s.Name, s.Mean().Round(time.Microsecond),
			float64(s.Mean())/float64(floor), diff, s.N, pages)
	}
}
