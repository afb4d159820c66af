package leasehold

import (
	"context"
	"errors"
	"io"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// Audit replays a world's journal from the store, verifying the hash chain
// and the lease fold, and proves for every position which holder and epoch
// held the write lease. It also checks that the store's head row agrees with
// the fold.
func (c *Client) Audit(ctx context.Context, id string) (AuditReport, error) {
	// The head is read first and the journal replayed up to it, so appends
	// committing during the audit cannot make the two look out of step.
	w, err := c.World(ctx, id)
	if err != nil {
		return AuditReport{}, err
	}
	a := journal.NewAuditor()
	err = c.Replay(ctx, id, 1, func(e *Entry) error {
		if e.Position > w.Position {
			return errStopReplay
		}
		_ = a.Add(e) // the first violation is kept in the report
		return nil
	})
	rep := a.Report()
	if err != nil && !errors.Is(err, errStopReplay) {
		return rep, err
	}
	if rep.OK() && !w.State.Equal(rep.Final) {
		rep.Violation = &journal.Violation{World: id, Position: w.Position, Rule: "head_row",
			Detail: "the store's head row " + w.State.String() + " disagrees with the fold " + rep.Final.String()}
	}
	return rep, nil
}

var errStopReplay = errors.New("stop replay")

// Export writes a world's journal as JSONL (see package journal), ending
// in the end record that proves the export whole, and returns how many
// entries it wrote. An export cut off before its end record — a killed
// process, a full disk — is refused by ReadJSONL, AuditJSONL and Import.
// It exports the journal up to the head it reads first, so appends that
// commit meanwhile do not make the end record disagree.
func (c *Client) Export(ctx context.Context, id string, w io.Writer) (int64, error) {
	head, err := c.World(ctx, id)
	if err != nil {
		return 0, err
	}
	jw := journal.NewWriter(w)
	var n int64
	err = c.Replay(ctx, id, 1, func(e *Entry) error {
		if e.Position > head.Position {
			return errStopReplay
		}
		n++
		return jw.Write(e)
	})
	if err != nil && !errors.Is(err, errStopReplay) {
		return n, err
	}
	return n, jw.Close()
}

// ReadJSONL reads a whole JSONL export. A torn or malformed line is a
// *LineError naming its line; nothing is returned from a bad file.
func ReadJSONL(r io.Reader) ([]Entry, error) {
	jr := journal.NewReader(r)
	var out []Entry
	for {
		e, err := jr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
}

// AuditJSONL audits an exported journal file without a store. A line that
// cannot be read is reported as an error naming its line number.
func AuditJSONL(r io.Reader) (AuditReport, error) {
	jr := journal.NewReader(r)
	a := journal.NewAuditor()
	for {
		e, err := jr.Next()
		if errors.Is(err, io.EOF) {
			return a.Report(), nil
		}
		if err != nil {
			return a.Report(), err
		}
		if a.Add(e) != nil {
			return a.Report(), nil
		}
	}
}

// Import creates a world from a JSONL export after verifying all of it;
// nothing is written if any line or entry fails. ErrConflict if the world
// exists.
func (c *Client) Import(ctx context.Context, r io.Reader) (*World, error) {
	entries, err := ReadJSONL(r)
	if err != nil {
		return nil, err
	}
	return c.d.JournalImport(ctx, &driver.JournalImportParams{Entries: entries})
}
