package leasehold_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/journal"
)

// FuzzAuditJSONL: the two readers of an export agree. ReadJSONL (the import
// path) takes a file exactly when AuditJSONL meets no unreadable line
// before the audit's first violation, both refusing with the same
// *LineError; and for a file ReadJSONL takes, AuditJSONL's report is the
// audit of the entries ReadJSONL returned. Whole exports are seeded from
// testdata/fuzz/FuzzAuditJSONL.
func FuzzAuditJSONL(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"world":"w1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, rerr := leasehold.ReadJSONL(bytes.NewReader(data))
		rep, aerr := leasehold.AuditJSONL(bytes.NewReader(data))

		var le *leasehold.LineError
		if aerr != nil {
			require.True(t, errors.As(aerr, &le), "AuditJSONL: %v", aerr)
			require.ErrorIs(t, aerr, leasehold.ErrCorrupt)
			require.Error(t, rerr, "AuditJSONL refused a line ReadJSONL took")
			require.Equal(t, aerr.Error(), rerr.Error())
			require.True(t, rep.OK(), "a line error after a violation")
			return
		}
		if rerr != nil {
			require.True(t, errors.As(rerr, &le), "ReadJSONL: %v", rerr)
			require.Nil(t, entries, "ReadJSONL returned entries with an error")
			require.False(t, rep.OK(), "AuditJSONL read past a line ReadJSONL refuses without a violation first")
			require.Less(t, rep.Entries, int64(le.Line), "the violation is on an earlier line")
			return
		}
		want := journal.Audit(entries)
		require.Equal(t, want, rep)
	})
}
