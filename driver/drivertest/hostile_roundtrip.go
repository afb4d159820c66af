package drivertest

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// roundTripWorlds holds every world of x's store to "an accepted value
// survives export → audit → import": its journal is written as JSONL,
// read back and audited from the bytes alone, imported into an empty
// store, and read from there entry for entry equal — so a value the store
// accepted but could not carry through the journal's own formats (a term
// the grant payload cannot hold, a time the JSONL layout drops) fails
// here, not in an operator's restore.
func (r *HostileReport) roundTripWorlds(x *hx) {
	t := x.t
	require.NotNil(t, x.h.OpenEmpty, "the harness must have OpenEmpty for the import half of the round trip")
	open := x.h.OpenEmpty(t)
	d, err := open(x.ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	_, err = d.Migrate(x.ctx)
	require.NoError(t, err)
	ws, err := x.d.WorldList(x.ctx, &driver.WorldListParams{Limit: driver.MaxWorldListLimit})
	require.NoError(t, err)
	for _, w := range ws {
		if err := roundTrip(x, d, w.World); err != nil {
			r.RoundTripFailures++
			t.Errorf("world %q does not survive export → audit → import: %v", w.World, err)
		}
	}
}

func roundTrip(x *hx, into driver.Driver, world string) error {
	orig := x.read(world)
	var buf bytes.Buffer
	jw := journal.NewWriter(&buf)
	for i := range orig {
		if err := jw.Write(&orig[i]); err != nil {
			return fmt.Errorf("export of position %d: %w", orig[i].Position, err)
		}
	}
	if err := jw.Close(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	jr := journal.NewReader(bytes.NewReader(buf.Bytes()))
	a := journal.NewAuditor()
	var read []journal.Entry
	for {
		e, err := jr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the export back: %w", err)
		}
		if err := a.Add(e); err != nil {
			return fmt.Errorf("audit of the export: %w", err)
		}
		read = append(read, *e)
	}
	if err := sameEntries(orig, read); err != nil {
		return fmt.Errorf("the export reads back otherwise: %w", err)
	}
	if _, err := into.JournalImport(x.ctx, &driver.JournalImportParams{Entries: read}); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	var imported []journal.Entry
	for from := int64(1); ; {
		es, err := into.JournalRead(x.ctx, &driver.JournalReadParams{World: world, From: from, Limit: 500})
		if err != nil {
			return fmt.Errorf("reading the import: %w", err)
		}
		imported = append(imported, es...)
		if len(es) < 500 {
			break
		}
		from = es[len(es)-1].Position + 1
	}
	if err := sameEntries(orig, imported); err != nil {
		return fmt.Errorf("the import reads back otherwise: %w", err)
	}
	return nil
}

// sameEntries compares two journals field by field, bytes as bytes.
func sameEntries(want, got []journal.Entry) error {
	if len(want) != len(got) {
		return fmt.Errorf("%d entries, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := &want[i], &got[i]
		switch {
		case w.World != g.World, w.Position != g.Position, w.Epoch != g.Epoch, w.Kind != g.Kind, w.Holder != g.Holder, w.Key != g.Key:
			return fmt.Errorf("position %d: %+v, want %+v", w.Position, g, w)
		case !bytes.Equal(w.Payload, g.Payload):
			return fmt.Errorf("position %d: payload %q, want %q", w.Position, g.Payload, w.Payload)
		case !w.StoreTime.Equal(g.StoreTime):
			return fmt.Errorf("position %d: store time %s, want %s", w.Position, g.StoreTime, w.StoreTime)
		case !bytes.Equal(w.PrevHash, g.PrevHash), !bytes.Equal(w.Hash, g.Hash), !bytes.Equal(w.Signature, g.Signature):
			return fmt.Errorf("position %d: hashes differ", w.Position)
		}
	}
	return nil
}
