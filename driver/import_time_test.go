package driver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/journal"
)

// TestImportRefusesStoreTimesFinerThanTheStore (issue 17, found by the
// hostile-input suite): an entry whose store time had nanoseconds was
// imported, stored cut to microseconds, and read back as another time
// than the journal given. It is now refused before anything is written.
func TestImportRefusesStoreTimesFinerThanTheStore(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	p, err := journal.PlanCreate("w", "h", 30*time.Second, at)
	require.NoError(t, err)
	es := p.Entries
	_, err = PrepareImport(&JournalImportParams{Entries: es})
	require.NoError(t, err)

	fine := append([]journal.Entry(nil), es...)
	fine[0].StoreTime = at.Add(time.Nanosecond)
	journal.Seal(&fine[0])
	_, err = PrepareImport(&JournalImportParams{Entries: fine})
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "finer than the store's resolution")

	zoned := append([]journal.Entry(nil), es...)
	zoned[0].StoreTime = at.In(time.FixedZone("X", 3600))
	journal.Seal(&zoned[0])
	_, err = PrepareImport(&JournalImportParams{Entries: zoned})
	require.NoError(t, err, "a zone is not a finer time")
}
