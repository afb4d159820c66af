// Command leasehold is the Leasehold CLI: the HTTP API server (serve), a
// demo of the fenced world journal, migrations, audit, export and import,
// and the benchmark command.
//
// The store is chosen by --db (or LEASEHOLD_DATABASE_URL): a postgres:// URL
// selects Postgres, anything else is a SQLite file (default ./leasehold.db).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/leasehold/leasehold"
)

type command struct {
	name, usage string
	run         func(ctx context.Context, args []string, out io.Writer) error
}

var commands = []command{
	{"serve", "serve the HTTP API (runs, worlds, tokens; bearer tokens required, --tls-cert/--tls-key for HTTPS) on --listen (default 127.0.0.1:7460)", runServe},
	{"tokens", "API bearer tokens: `tokens create --scope S [--name N]`, `tokens ls [--json]`, `tokens revoke ID`", runTokens},
	{"demo", "create a world, append, hand the lease around, show a fenced zombie, audit", runDemo},
	{"migrate", "apply pending schema migrations", runMigrate},
	{"queues", "list queues with their runs by state (--json); `queues pause|resume QUEUE`, `queues limit QUEUE --max-running N --rate N --per D`", runQueues},
	{"runs", "list runs by id, filtered by --queue and --state (--after, --limit, --json)", runRuns},
	{"worlds", "list worlds and their leases; `worlds show|submit|spill|handback|revoke` (see `worlds help`)", runWorlds},
	{"audit", "verify a journal (--world W from the store, or --file F.jsonl) and prove who held the lease at every position", runAudit},
	{"export", "write a world's journal as JSONL", runExport},
	{"import", "create a world from a verified JSONL export", runImport},
	{"host", "run a world host: hold the worlds the store gives --node, run their turns, serve its HTTP API", runHost},
	{"sweep", "revoke expired leases and grant each world's home the next epoch", runSweep},
	{"mode", "heartbeat mode of a running server's workers: `mode get`, `mode set <sync|dark|writebehind> --worker NAME|--all` (--server, --token)", runMode},
	{"doctor", "sample the store clock (offset, rate error, steps, latency) and judge whether write-behind is safe", runDoctor},
	{"sim", "deterministic simulation: `sim --seeds N --from S` checks the safety invariants under seeded faults", runSim},
	{"bench", "benchmarks: `bench journal` (appends beside the raw fsync rate), `bench runs` (runs/s, events), `bench events` (group commit vs one INSERT per event), `bench gate` (the gate beside time.Now), `bench memory` (heap per held run), `bench retention` (the cleaner against claim latency) — see docs/BENCHMARKS.md", runBench},
	{"periodic", "check a periodic schedule (--cron or --every) and show its latest and next ticks with their unique keys", runPeriodic},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, out, errOut io.Writer) int {
	if len(args) == 0 {
		usage(errOut)
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(out) // asked for: the usage is the answer, on stdout, exit 0
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			if err := c.run(ctx, args[1:], out); err != nil {
				if errors.Is(err, flag.ErrHelp) {
					return 0 // -h/--help was asked for; the flag set printed it
				}
				var fail auditFailed
				if errors.As(err, &fail) {
					return 1
				}
				fmt.Fprintf(errOut, "leasehold %s: %v\n", c.name, err)
				return 1
			}
			return 0
		}
	}
	fmt.Fprintf(errOut, "leasehold: unknown command %q\n\n", args[0])
	usage(errOut)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: leasehold <command> [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.usage)
	}
	fmt.Fprintln(w, "\nThe store is --db (or $LEASEHOLD_DATABASE_URL): a postgres:// URL, or a SQLite file (default ./leasehold.db).")
}

// storeFlags adds --db to fs and returns a function opening the client
// (migrating the store first).
func storeFlags(fs *flag.FlagSet) func(ctx context.Context) (*leasehold.Client, error) {
	db := fs.String("db", defaultStore(), "postgres:// URL or SQLite file path")
	return func(ctx context.Context) (*leasehold.Client, error) {
		return openClient(ctx, *db, leasehold.Config{})
	}
}

// newFlagSet is a command's flag set. Its usage and errors go to the
// command's output, so `leasehold X --help` prints where it was asked.
func newFlagSet(name string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	return fs
}
