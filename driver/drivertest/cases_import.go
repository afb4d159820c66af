package drivertest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
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
	{"ImportRefusesFutureTimesAndUnsweepableWorlds", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		grant := func(at time.Time, termMS int64) journal.Entry {
			en := journal.Entry{World: "w1", Position: 1, Epoch: 1, Kind: journal.KindGranted, Holder: "zombie",
				StoreTime: journal.NormalizeTime(at)}
			en.Payload, _ = json.Marshal(journal.Granted{Holder: "zombie", Epoch: 1, TermMS: termMS, GrantedAtPosition: 1})
			journal.Seal(&en)
			return en
		}
		// Stamped a year ahead of the store clock: it would hold its lease
		// for a year of store time.
		_, err := e.d.JournalImport(e.ctx, &driver.JournalImportParams{Entries: []journal.Entry{grant(StartTime.AddDate(1, 0, 0), 30000)}})
		require.ErrorIs(t, err, driver.ErrInvalid)
		// A 25h term: the sweep could never re-grant it.
		_, err = e.d.JournalImport(e.ctx, &driver.JournalImportParams{Entries: []journal.Entry{grant(StartTime, 25*3600*1000)}})
		require.ErrorIs(t, err, driver.ErrCorrupt)
		_, err = e.d.JournalImport(e.ctx, &driver.JournalImportParams{Entries: []journal.Entry{grant(StartTime, 30000)}, Home: "bad home"})
		require.ErrorIs(t, err, driver.ErrInvalid)
		_, err = e.d.WorldGet(e.ctx, &driver.WorldGetParams{World: "w1"})
		require.ErrorIs(t, err, driver.ErrNotFound, "nothing written")
		_, err = e.d.JournalImport(e.ctx, &driver.JournalImportParams{Entries: []journal.Entry{grant(StartTime, 30000)}})
		require.NoError(t, err)
	}},
}
