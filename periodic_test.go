package leasehold_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/journal"
)

// TestPeriodicConfigRefusedAtNewClient: a cron expression that does not
// parse, or a queue outside Config.Queues, is refused by NewClient with a
// typed error naming the field; nothing is opened for use.
func TestPeriodicConfigRefusedAtNewClient(t *testing.T) {
	t.Parallel()
	run := leasehold.Enqueue{Queue: "reports"}
	err := leasehold.Config{Periodic: []leasehold.PeriodicRun{{Name: "nightly", Cron: "0 25 * * *", Run: run}}}.Validate()
	require.ErrorIs(t, err, leasehold.ErrInvalid)
	var ie *journal.InputError
	require.True(t, errors.As(err, &ie))
	require.Equal(t, "periodic[0].cron", ie.Field)
	require.Contains(t, err.Error(), `"0 25 * * *"`)

	err = leasehold.Config{Queues: []string{"other"}, Periodic: []leasehold.PeriodicRun{{Name: "n", Every: time.Hour, Run: run}}}.Validate()
	require.ErrorIs(t, err, leasehold.ErrUnknownQueue)

	_, err = leasehold.NewClient(context.Background(), hostileClients[0].open(t),
		leasehold.Config{Periodic: []leasehold.PeriodicRun{{Name: "n", Cron: "@often", Run: run}}})
	require.ErrorIs(t, err, leasehold.ErrInvalid)
}
