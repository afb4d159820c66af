package drivertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
)

var importCases = []Case{
	{"ImportRoundTripAndConflict", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		e.append1("w1", "intruder", 1, 1, "x", "{}")
		e.append1("w1", "home", 1, 1, "x", `{"a":"<&>"}`)
		e.handoff("w1", "home", "a", 1)
		src := e.read("w1")
		_, err := e.d.JournalImport(e.ctx, &driver.JournalImportParams{Entries: src})
		require.ErrorIs(t, err, driver.ErrConflict)

		dst := newEnv(t, f)
		w, err := dst.d.JournalImport(dst.ctx, &driver.JournalImportParams{Entries: src})
		require.NoError(t, err)
		require.True(t, w.State.Equal(e.get("w1").State))
		require.Equal(t, "home", w.Home)
		require.Equal(t, src, dst.read("w1"))
		dst.audit("w1")
		// The imported rejection marker still bounds the journal.
		dst.append1("w1", "intruder", 1, 1, "x", "{}")
		require.Len(t, dst.read("w1"), len(src)+1, "new epoch: one more rejection")
		dst.append1("w1", "intruder", 1, 1, "x", "{}")
		require.Len(t, dst.read("w1"), len(src)+1)
	}},
	{"ImportRefusesCorruptJournal", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		e.append1("w1", "home", 1, 1, "x", `{"a":1}`)
		src := e.read("w1")
		src[1].Payload = []byte(`{"a":2}`)
		dst := newEnv(t, f)
		_, err := dst.d.JournalImport(dst.ctx, &driver.JournalImportParams{Entries: src})
		require.ErrorIs(t, err, driver.ErrCorrupt)
		require.Contains(t, err.Error(), "position 2")
		_, err = dst.d.WorldGet(dst.ctx, &driver.WorldGetParams{World: "w1"})
		require.ErrorIs(t, err, driver.ErrNotFound, "nothing written")
	}},
}
