// Command leasehold is the Leasehold CLI: the HTTP API server (serve), runs
// and queues, worlds and their hosts, tokens, a demo of the fenced world
// journal, migrations, audit, export and import, the doctor, the simulator
// and the benchmark command.
//
// The store is chosen by --db (or LEASEHOLD_DATABASE_URL): a postgres:// URL
// selects Postgres, anything else is a SQLite file (default ./leasehold.db).
//
// The command tree is built with spf13/cobra (root.go); the exit codes are
// defined once, in exitcode.go, and documented in the README.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns its exit code. It builds a
// fresh command tree per call (no state shared between calls), so tests
// run it in parallel in-process.
func run(ctx context.Context, args []string, out, errOut io.Writer) int {
	a := &app{out: out, errOut: errOut}
	root := newRoot(a)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	if !a.ran {
		// Cobra refused the command line before any command ran: an
		// unknown command or flag, a flag value that does not parse, the
		// wrong arguments. Typed here, where it is known, so exitCode
		// maps it like any other usage error.
		err = usageError{err}
	}
	code := exitCode(err)
	if !errors.As(err, new(reportedFailure)) {
		fmt.Fprintf(errOut, "%s: %v\n", cmd.CommandPath(), err)
		if code == exitUsage {
			fmt.Fprintf(errOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
	}
	return code
}
