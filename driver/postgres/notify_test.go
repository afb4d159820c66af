package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
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

// TestJournalNotifyEveryAppendPath: every way an append writes entries
// wakes a listener of the schema with its world — the one statement for a
// single request and for a batch (which notify in the statement and have
// the trigger step aside, migration 0026), and the function when the
// statement hands it the append (a refusal journals append.rejected; a
// batch repeating a key goes to it directly), which the trigger notifies.
// A step that wrote nothing notifies nothing: the next notification read
// is the next step's.
func TestJournalNotifyEveryAppendPath(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a bound, not a timing guess
	defer cancel()
	writer := open(t, Config{})
	listener, err := Open(ctx, Config{URL: writer.s.cfg.URL, Schema: writer.s.cfg.Schema})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, listener.Close()) })
	got, err := listener.JournalNotify(ctx)
	require.NoError(t, err)

	w := make(map[string]*driver.World)
	for _, id := range []string{"one", "many", "refused", "dupkeys", "quiet"} {
		hw, err := writer.WorldCreate(ctx, &driver.WorldCreateParams{World: id, Home: "h", Term: time.Hour})
		require.NoError(t, err)
		require.Equal(t, id, <-got)
		w[id] = hw
	}
	req := func(id, holder, key string) journal.AppendRequest {
		return journal.AppendRequest{Holder: holder, Epoch: w[id].Epoch, SeenPosition: w[id].GrantedAt, Kind: "x", Key: key,
			Payload: []byte(`{}`)}
	}
	for _, c := range []struct {
		world string
		reqs  []journal.AppendRequest
	}{
		{"one", []journal.AppendRequest{req("one", "h", "")}},
		{"many", []journal.AppendRequest{req("many", "h", ""), req("many", "h", "k1"), req("many", "h", "k2")}},
		{"refused", []journal.AppendRequest{req("refused", "intruder", "")}},
		{"dupkeys", []journal.AppendRequest{req("dupkeys", "h", "k"), req("dupkeys", "h", "k")}},
	} {
		// A deadline, as the group committer gives: the timeouts'
		// set_config shares the transaction.
		actx, acancel := context.WithTimeout(ctx, time.Minute)
		_, err := writer.JournalAppend(actx, &driver.JournalAppendParams{World: c.world, Requests: c.reqs})
		acancel()
		require.NoError(t, err)
		require.Equal(t, c.world, <-got, "appending to %q", c.world)
	}
	// The trigger still notifies for other writers after an append set
	// the setting on the same pooled connection: its transaction ended.
	_, err = writer.JournalAppend(ctx, &driver.JournalAppendParams{World: "quiet", Requests: []journal.AppendRequest{req("quiet", "h", "")}})
	require.NoError(t, err)
	require.Equal(t, "quiet", <-got)
	_, err = writer.WorldCreate(ctx, &driver.WorldCreateParams{World: "after", Home: "h", Term: time.Hour})
	require.NoError(t, err)
	require.Equal(t, "after", <-got)
}
