package leasehold_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
)

// TestHostileEdgesThroughTheClient drives the edge rules of issue 17
// (defects 4, 9, 11 and 12) through the public face: each refusal matches
// leasehold.ErrInvalid, and a retried append key is applied once, also when
// the retries share one group commit.
func TestHostileEdgesThroughTheClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := openSQLite(t, leasehold.Config{})
	w, err := c.CreateWorld(ctx, "w", "home")
	require.NoError(t, err)
	app := func(key string, seen int64, payload string) (int64, error) {
		return c.Append(ctx, leasehold.AppendParams{World: "w", Holder: "home", Epoch: w.Epoch, SeenPosition: seen,
			Kind: "note", Key: key, Payload: []byte(payload)})
	}

	// Defect 12: ten concurrent appends of one key, one entry.
	var wg sync.WaitGroup
	pos := make([]int64, 10)
	for i := range pos {
		wg.Go(func() {
			p, err := app("order-1", 1, `{}`)
			require.NoError(t, err)
			pos[i] = p
		})
	}
	wg.Wait()
	for _, p := range pos {
		require.Equal(t, pos[0], p)
	}
	again, err := app("order-1", 1, `{"other":true}`)
	require.NoError(t, err)
	require.Equal(t, pos[0], again)
	es, err := c.Read(ctx, "w", 1, 0)
	require.NoError(t, err)
	require.Len(t, es, 2)

	// Defect 11: a seen position past the head; whitespace is not payload.
	_, err = app("", math.MaxInt64, `{}`)
	require.ErrorIs(t, err, leasehold.ErrInvalid)
	ws := strings.Repeat(" ", 200_000)
	_, err = app("", 1, ws+`{}`+ws)
	require.NoError(t, err)

	// Defect 9: C1 and bidi controls in keys.
	for _, key := range []string{"k\u0085", "k\u202e"} {
		_, err = app(key, 1, `{}`)
		require.ErrorIs(t, err, leasehold.ErrInvalid, "%q", key)
		_, err = c.Enqueue(ctx, leasehold.Enqueue{Queue: "q", UniqueKey: key})
		require.ErrorIs(t, err, leasehold.ErrInvalid, "%q", key)
	}

	// Defect 4: nesting past the bound.
	deep := strings.Repeat("[", 65) + strings.Repeat("]", 65)
	_, err = app("", 1, deep)
	require.ErrorIs(t, err, leasehold.ErrInvalid)
	_, err = c.Enqueue(ctx, leasehold.Enqueue{Queue: "q", Payload: []byte(deep)})
	require.ErrorIs(t, err, leasehold.ErrInvalid)
}
