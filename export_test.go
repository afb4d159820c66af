package leasehold_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/journal"
)

// TestTornExportAtALineBoundaryIsRefused (issue 17, defect 6): an export
// cut exactly at a line boundary — what a killed line-by-line export
// leaves — and an empty file are refused by AuditJSONL, ReadJSONL and
// Import, which used to audit them OK and import a shorter world.
func TestTornExportAtALineBoundaryIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := openSQLite(t, leasehold.Config{})
	w, err := c.CreateWorld(ctx, "w", "home")
	require.NoError(t, err)
	for i := range 29 {
		_, err := c.Append(ctx, leasehold.AppendParams{World: "w", Holder: "home", Epoch: w.Epoch,
			SeenPosition: w.GrantedAt, Kind: "note", Payload: fmt.Appendf(nil, `{"i":%d}`, i)})
		require.NoError(t, err)
	}
	var full bytes.Buffer
	n, err := c.Export(ctx, "w", &full)
	require.NoError(t, err)
	require.Equal(t, int64(30), n)
	rep, err := leasehold.AuditJSONL(bytes.NewReader(full.Bytes()))
	require.NoError(t, err)
	require.True(t, rep.OK())

	lines := bytes.SplitAfter(full.Bytes(), []byte("\n"))
	lines = lines[:len(lines)-1] // SplitAfter's empty tail
	require.Len(t, lines, 31, "30 entries and the end record")
	for name, data := range map[string][]byte{
		"last 2 lines cut":       bytes.Join(lines[:len(lines)-2], nil),
		"end record cut":         bytes.Join(lines[:len(lines)-1], nil),
		"empty file":             nil,
		"last entry cut, end on": append(bytes.Join(lines[:len(lines)-2], nil), lines[len(lines)-1]...),
	} {
		_, err := leasehold.AuditJSONL(bytes.NewReader(data))
		require.ErrorIs(t, err, leasehold.ErrCorrupt, "%s: audit", name)
		_, err = leasehold.ReadJSONL(bytes.NewReader(data))
		require.ErrorIs(t, err, leasehold.ErrCorrupt, "%s: read", name)
		if name != "last entry cut, end on" {
			require.ErrorIs(t, err, journal.ErrTornTail, name)
		}
	}

	other := openSQLite(t, leasehold.Config{})
	_, err = other.Import(ctx, bytes.NewReader(bytes.Join(lines[:len(lines)-2], nil)))
	require.ErrorIs(t, err, leasehold.ErrCorrupt)
	_, err = other.World(ctx, "w")
	require.ErrorIs(t, err, leasehold.ErrNotFound, "nothing imported from a torn export")
	imported, err := other.Import(ctx, bytes.NewReader(full.Bytes()))
	require.NoError(t, err)
	require.Equal(t, int64(30), imported.Position)
}
