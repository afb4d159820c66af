package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold"
)

// runAudit is `leasehold audit`: verify a journal from the store
// (--world) or an export (--file), print who held the lease at each
// position, and exit 1 after the report when it fails.
func runAudit(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	world := fs.String("world", "", "audit this world from the store")
	file := fs.String("file", "", "audit this JSONL export instead of the store")
	positions := fs.Bool("positions", false, "print the lease holder of every position, not only the spans")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		var rep leasehold.AuditReport
		switch {
		case *file != "" && *world == "":
			f, err := os.Open(*file)
			if err != nil {
				return err
			}
			defer f.Close()
			rep, err = leasehold.AuditJSONL(f)
			var le *leasehold.LineError
			if errors.As(err, &le) {
				printSpans(out, rep, *positions)
				fmt.Fprintf(out, "FAIL %s line %d: %v (%d entries verified before it)\n", *file, le.Line, le.Err, rep.Entries)
				return reportedFailure{}
			}
			if err != nil {
				return err
			}
		case *world != "" && *file == "":
			c, err := open(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			if rep, err = c.Audit(ctx, *world); err != nil {
				return err
			}
		default:
			return usagef("give exactly one of --world or --file")
		}
		printReport(out, rep, *positions)
		if !rep.OK() {
			return reportedFailure{}
		}
		return nil
	})
}

func printReport(out io.Writer, rep leasehold.AuditReport, positions bool) {
	printSpans(out, rep, positions)
	if rep.OK() {
		f := rep.Final
		fmt.Fprintf(out, "OK: hash chain verified; %d signatures verified, covering %d entries; every position written under the epoch current at it; head %d, epoch %d",
			rep.Signatures, rep.Signed, f.Position, f.Epoch)
		if f.Holder != "" {
			fmt.Fprintf(out, " held by %s until %s", f.Holder, f.ExpiresAt.Format(time.RFC3339))
		}
		fmt.Fprintln(out)
		return
	}
	v := rep.Violation
	fmt.Fprintf(out, "FAIL position %d: %s: %s\n", v.Position, v.Rule, v.Detail)
}

// printSpans proves, position by position (or span by span), which epoch
// and holder held the write lease.
func printSpans(out io.Writer, rep leasehold.AuditReport, positions bool) {
	fmt.Fprintf(out, "audit of world %s: %d entries verified\n", rep.World, rep.Entries)
	for _, s := range rep.Spans {
		holder := s.Holder
		if holder == "" {
			holder = "(nobody: epoch revoked)"
		}
		if positions {
			for p := s.From; p <= s.To; p++ {
				fmt.Fprintf(out, "  position %d: epoch %d held by %s\n", p, s.Epoch, holder)
			}
			continue
		}
		fmt.Fprintf(out, "  positions %d-%d: epoch %d held by %s\n", s.From, s.To, s.Epoch, holder)
	}
}

// runExport is `leasehold export`: a world's journal as JSONL, to stdout
// or whole into --out.
func runExport(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	world := fs.String("world", "", "world to export (required)")
	file := fs.String("out", "", "write to this file instead of stdout")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		if *world == "" {
			return usagef("--world is required")
		}
		c, err := open(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		if *file == "" {
			bw := bufio.NewWriter(out)
			if _, err := c.Export(ctx, *world, bw); err != nil {
				return err
			}
			return bw.Flush()
		}
		n, err := exportFile(ctx, c, *world, *file)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "exported %d entries of %s to %s\n", n, *world, *file)
		return nil
	})
}

// exportFile writes the export to a temporary file beside path, buffered,
// syncs it and renames it into place: path holds a whole export or is left
// as it was, never a prefix (the end record inside proves it whole too).
func exportFile(ctx context.Context, c *leasehold.Client, world, path string) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	bw := bufio.NewWriterSize(tmp, 256<<10)
	n, err := c.Export(ctx, world, bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return n, err
}

// runImport is `leasehold import`: a new world from a verified export.
func runImport(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	file := fs.String("file", "", "JSONL export to import (required)")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		if *file == "" {
			return usagef("--file is required")
		}
		f, err := os.Open(*file)
		if err != nil {
			return err
		}
		defer f.Close()
		c, err := open(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		w, err := c.Import(ctx, f)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "imported world %s: %d entries, epoch %d held by %q\n", w.World, w.Position, w.Epoch, w.Holder)
		return nil
	})
}
