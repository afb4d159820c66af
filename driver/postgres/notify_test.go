package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
)

// TestJournalNotifyWakesOtherDriversOfTheSchemaOnly: the journal trigger
// (migration 0013) notifies each world whose entries a transaction
// committed, to every listener of that schema — here another driver, with
// its own connections, as another process would be — and not to a
// listener of another schema.
func TestJournalNotifyWakesOtherDriversOfTheSchemaOnly(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound, not a timing guess
	defer cancel()
	writer := open(t, Config{})
	listener, err := Open(ctx, Config{URL: writer.s.cfg.URL, Schema: writer.s.cfg.Schema})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, listener.Close()) })
	other := open(t, Config{}) // another schema

	got, err := listener.JournalNotify(ctx)
	require.NoError(t, err)
	elsewhere, err := other.JournalNotify(ctx)
	require.NoError(t, err)

	_, err = writer.WorldCreate(ctx, &driver.WorldCreateParams{World: "w1", Home: "h", Term: term})
	require.NoError(t, err)
	require.Equal(t, "w1", <-got)

	_, err = other.WorldCreate(ctx, &driver.WorldCreateParams{World: "mine", Home: "h", Term: term})
	require.NoError(t, err)
	require.Equal(t, "mine", <-elsewhere)
	_, err = writer.WorldCreate(ctx, &driver.WorldCreateParams{World: "w2", Home: "h", Term: term})
	require.NoError(t, err)
	require.Equal(t, "w2", <-got, "the other schema's world did not wake this listener")
	select {
	case w := <-elsewhere:
		t.Fatalf("a listener of another schema was woken for %q", w)
	default:
	}
}
