package driver_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// seedExport is the JSONL export of a journal using every kind: data
// entries, a rejection, a handoff, a renewal, a revoke and a new grant; with
// sweep, it ends in an expiry sweep, else with node-b holding epoch 3.
func seedExport(t testing.TB, sweep bool) []byte {
	var j []journal.Entry
	apply := func(p journal.Plan, err error) journal.State {
		require.NoError(t, err)
		j = append(j, p.Entries...)
		return p.After
	}
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	never := func(string) bool { return false }
	s := apply(journal.PlanCreate("w1", "home", 30*time.Second, at(0)))
	p, _ := journal.PlanAppend(s, at(1), []journal.AppendRequest{
		{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "note", Key: "k1", Payload: []byte(`{"msg":"hi"}`)},
		{Holder: "zombie", Epoch: 1, SeenPosition: 1, Kind: "note", Payload: []byte(`1`)},
	}, never)
	s = apply(p, nil)
	s = apply(journal.PlanHandoff(s, at(2), "home", "node-a", 1, 30*time.Second))
	s = apply(journal.PlanRenew(s, at(3), "node-a", 2, 20*time.Second))
	s = apply(journal.PlanRevoke(s, at(4), 2, "operator"))
	s = apply(journal.PlanGrant(s, at(5), "node-b", 2, 10*time.Second))
	if sweep {
		p, ok := journal.PlanSweep(s, at(20), "home", 30*time.Second)
		require.True(t, ok)
		apply(p, nil)
	}
	var buf bytes.Buffer
	w := journal.NewWriter(&buf)
	for i := range j {
		require.NoError(t, w.Write(&j[i]))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// FuzzPrepareImport feeds the import path a fuzzed JSONL export, re-hashed
// when resealed is set so that edits reach the lease rules, with a fuzzed
// home and default term. Nothing unverified is accepted: an accepted import
// is a journal the auditor verifies, starting with lease.granted, whose
// final state, rejection markers, home and term are the ones the import
// reports, and whose world the expiry sweep can always re-grant. A refusal
// matches lease.ErrInvalid or lease.ErrCorrupt.
func FuzzPrepareImport(f *testing.F) {
	for _, sweep := range []bool{false, true} {
		seed := seedExport(f, sweep)
		f.Add(seed, false, "", int64(0))
		f.Add(seed, true, "node-z", int64(time.Minute))
		f.Add(bytes.SplitAfter(seed, []byte("\n"))[0], true, "", int64(0))
	}
	f.Add([]byte(nil), false, "", int64(0))
	f.Add(seedExport(f, false), true, "bad home", int64(-1))
	f.Add(seedExport(f, false), true, "home", int64(journal.MaxTerm+1))
	f.Fuzz(func(t *testing.T, data []byte, resealed bool, home string, term int64) {
		var entries []journal.Entry
		r := journal.NewReader(bytes.NewReader(data))
		for {
			e, err := r.Next()
			if err != nil {
				break // the reader's refusals are FuzzJSONLReader's
			}
			entries = append(entries, *e)
		}
		if resealed {
			var prev []byte
			for i := range entries {
				entries[i].PrevHash = prev
				journal.Seal(&entries[i])
				prev = entries[i].Hash
			}
		}

		imp, err := driver.PrepareImport(&driver.JournalImportParams{Entries: entries, Home: home, DefaultTerm: time.Duration(term)})
		if err != nil {
			require.Nil(t, imp)
			require.True(t, errors.Is(err, lease.ErrInvalid) || errors.Is(err, lease.ErrCorrupt), "refusal matches neither ErrInvalid nor ErrCorrupt: %v", err)
			return
		}

		rep := journal.Audit(entries)
		require.True(t, rep.OK(), "import accepted a journal the audit refuses: %v", rep.Violation)
		require.True(t, imp.Final.Equal(rep.Final))
		require.Equal(t, journal.KindGranted, entries[0].Kind)
		require.NoError(t, journal.ValidateID("home", imp.Home))
		require.NoError(t, journal.ValidateTerm(imp.DefaultTerm))
		if home != "" {
			require.Equal(t, home, imp.Home)
		}
		if term != 0 {
			require.Equal(t, time.Duration(term), imp.DefaultTerm)
		}

		var want []driver.Rejection
		for _, e := range entries {
			if e.Kind == journal.KindRejected {
				want = append(want, driver.Rejection{Epoch: e.Epoch, Holder: rejectedHolder(t, e.Payload)})
			}
		}
		require.Equal(t, want, imp.Rejections)

		// Store times from the future are refused; the last one itself is not.
		last := imp.Final.LastTime
		require.NoError(t, imp.CheckTime(last))
		require.ErrorIs(t, imp.CheckTime(last.Add(-time.Microsecond)), lease.ErrInvalid)

		// The sweep can always re-grant an imported world to its home once
		// the lease in force expires, and that plan verifies.
		if s := imp.Final; s.Held() {
			p, ok := journal.PlanSweep(s, s.ExpiresAt, imp.Home, imp.DefaultTerm)
			require.True(t, ok, "the sweep cannot re-grant an imported world")
			rep := journal.Audit(append(entries, p.Entries...))
			require.True(t, rep.OK(), "%v", rep.Violation)
		}
	})
}

func rejectedHolder(t *testing.T, payload []byte) string {
	var p journal.Rejected
	require.NoError(t, json.Unmarshal(payload, &p))
	return p.Holder
}
