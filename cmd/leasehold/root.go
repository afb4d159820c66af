package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/leasehold/leasehold"
)

// app is one invocation of the CLI: where it writes, and whether a
// command's own code ran (so run can tell cobra's refusals of the command
// line, exit 2, from the command's own errors).
type app struct {
	out, errOut io.Writer
	ran         bool
	noProgress  bool // --no-progress
}

// action adapts a command body to cobra's RunE: it marks that the command
// ran, and hands the body its context and output.
func (a *app) action(fn func(ctx context.Context, args []string, out io.Writer) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		a.ran = true
		return fn(cmd.Context(), args, cmd.OutOrStdout())
	}
}

// command is a leaf command: use, short help, the positional arguments it
// takes, and build, which adds its flags and RunE.
func (a *app) command(use, short string, args cobra.PositionalArgs, build func(*app, *cobra.Command)) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: args}
	build(a, cmd)
	return cmd
}

// group is a command whose subcommands do the work. Alone, or with an
// unknown subcommand, it is a usage error; `GROUP help` prints its help
// (the dispatcher this tree replaced answered it, so scripts may use it).
func (a *app) group(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs,
		RunE: a.action(func(context.Context, []string, io.Writer) error {
			return usagef("%s needs a subcommand (see --help)", use)
		})}
	cmd.AddCommand(subs...)
	addHelpSubcommand(cmd)
	return cmd
}

// addHelpSubcommand adds a hidden `help` to a command with subcommands.
// It tolerates any flag (`worlds help --db x`), as the old dispatcher did.
func addHelpSubcommand(parent *cobra.Command) {
	parent.AddCommand(&cobra.Command{Use: "help", Short: "this help", Hidden: true, Args: cobra.ArbitraryArgs,
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		RunE:               func(*cobra.Command, []string) error { return parent.Help() }})
}

// noArgs refuses positional arguments, naming them: on a command with
// subcommands the first is a subcommand misspelled.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 && cmd.HasAvailableSubCommands() {
		return usagef("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	if len(args) > 0 {
		return usagef("%s takes no argument, got %q", cmd.CommandPath(), args)
	}
	return nil
}

// oneArg is exactly one positional argument, named what in the error.
func oneArg(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usagef("%s needs one %s, got %d arguments", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}

// dbFlag adds --db to fs: a postgres:// URL or a SQLite file path.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", defaultStore(), "postgres:// URL or SQLite file path; $LEASEHOLD_DATABASE_URL sets the default")
}

// storeFlags adds --db to fs and returns a function opening the client
// over it (migrating the store first). Every command that reads or writes
// the store through the library opens it this one way.
func storeFlags(fs *flag.FlagSet) func(ctx context.Context) (*leasehold.Client, error) {
	db := dbFlag(fs)
	return func(ctx context.Context) (*leasehold.Client, error) {
		return openClient(ctx, *db, leasehold.Config{})
	}
}

// jsonFlag adds --json to a listing.
func jsonFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("json", false, "machine-readable JSON output (stable field names)")
}

// newRoot builds the command tree.
func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "leasehold",
		Short: "fenced leases and durable runs on Postgres or embedded SQLite",
		Long: "Leasehold: fenced leases, durable runs and world journals on Postgres or embedded SQLite.\n\n" +
			"The store is --db (or $LEASEHOLD_DATABASE_URL): a postgres:// URL, or a SQLite file (default ./leasehold.db).\n" +
			"Exit codes: 0 success, 1 error, 2 usage, 3 not found, 4 conflict or fenced (see the README).",
		Args:          cobra.NoArgs,
		SilenceErrors: true, // run prints errors, once, and picks the exit code
		SilenceUsage:  true, // a failed command is not a reason to print its usage
		RunE: a.action(func(context.Context, []string, io.Writer) error {
			return usagef("no command given (see --help)")
		}),
	}
	root.SetOut(a.out)
	root.SetErr(a.errOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentFlags().BoolVar(&a.noProgress, "no-progress", false, "no progress bars (they are shown only when stderr is a terminal)")

	cmd := a.command // short names for the table below
	root.AddCommand(
		cmd("serve", "serve the HTTP API (runs, worlds, tokens; bearer tokens required, --tls-cert/--tls-key for HTTPS) on --listen", noArgs, runServe),
		cmd("enqueue", "enqueue a run (or --count N of them) on --queue", noArgs, runEnqueue),
		runsCommand(a),
		queuesCommand(a),
		worldsCommand(a),
		a.group("tokens", "API bearer tokens: create, ls, revoke (straight in the store --db names)",
			cmd("create", "create a token: --scope S (repeatable) [--name N]; prints the secret once", noArgs, tokensCreate),
			withAliases(cmd("ls", "list tokens, without secrets", noArgs, tokensList), "list"),
			cmd("revoke ID", "revoke a token", oneArg("token ID"), tokensRevoke)),
		cmd("audit", "verify a journal (--world W from the store, or --file F.jsonl) and prove who held the lease at every position", noArgs, runAudit),
		cmd("export", "write a world's journal as JSONL", noArgs, runExport),
		cmd("import", "create a world from a verified JSONL export", noArgs, runImport),
		cmd("doctor", "sample the store clock (offset, rate error, steps, latency) and judge whether write-behind is safe", noArgs, runDoctor),
		cmd("migrate", "apply pending schema migrations", noArgs, runMigrate),
		benchCommand(a),
		cmd("sim", "deterministic simulation: check the safety invariants under seeded faults", noArgs, runSim),
		cmd("demo", "create a world, append, hand the lease around, show a fenced zombie, audit", noArgs, runDemo),
		cmd("host", "run a world host: hold the worlds the store gives --node, run their turns, serve its HTTP API", noArgs, runHost),
		cmd("sweep", "revoke expired leases and grant each world's home the next epoch", noArgs, runSweep),
		modeCommand(a),
		cmd("periodic", "check a periodic schedule (--cron or --every) and show its latest and next ticks with their unique keys", noArgs, runPeriodic),
	)
	// `completion bash|zsh|fish|powershell` is cobra's; added here rather
	// than on first Execute so that `completion` alone or with an unknown
	// shell is a usage error like any other group's.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.RunE = a.action(func(context.Context, []string, io.Writer) error {
				return usagef("completion needs a shell: bash, zsh, fish or powershell")
			})
		}
	}
	return root
}

// benchCommand is `bench`: alone (or `bench journal`) the journal
// benchmark, as before the command tree.
func benchCommand(a *app) *cobra.Command {
	bench := a.command("bench", "benchmarks: journal (the default), journal-parts, runs, events, gate, memory, heartbeats, worlds, retention, api — see docs/BENCHMARKS.md",
		cobra.NoArgs, runBenchJournal)
	cmd := a.command
	bench.AddCommand(
		cmd("journal", "appends beside the raw fsync rate, SQLite and Postgres", noArgs, runBenchJournal),
		cmd("journal-parts", "one append built up part by part beside the store's one-row commit", noArgs, runBenchJournalParts),
		cmd("runs", "runs/s with a no-op handler (drain and mixed shapes) and event rows/s", noArgs, runBenchRuns),
		cmd("events", "group-committed events beside one INSERT per event", noArgs, runBenchEvents),
		cmd("gate", "the write-behind gate beside time.Now", noArgs, runBenchGate),
		cmd("memory", "heap per held run", noArgs, runBenchMemory),
		cmd("heartbeats", "renewal statements per second by heartbeat mode", noArgs, runBenchHeartbeats),
		cmd("worlds", "world commands per second at home, spilled and home again", noArgs, runBenchWorlds),
		cmd("retention", "the cleaner against claim latency", noArgs, runBenchRetention),
		cmd("api", "runs/s end to end through the HTTP API with remote workers", noArgs, runBenchAPI),
	)
	addHelpSubcommand(bench)
	return bench
}

// withClient opens the store, runs fn with a client over it, and closes
// it: the open-use-close every store command shares.
func withClient(ctx context.Context, open func(context.Context) (*leasehold.Client, error), fn func(*leasehold.Client) error) error {
	c, err := open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(c)
}

// withAliases gives cmd other names (the dispatcher this tree replaced
// took `tokens list` too).
func withAliases(cmd *cobra.Command, names ...string) *cobra.Command {
	cmd.Aliases = append(cmd.Aliases, names...)
	return cmd
}
