package witness

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReconcileRaisesTheFloor: the asker learns nothing was accepted, and
// a paused holder's lower token arriving afterwards is refused, so the
// asker's own run of the effect is the only one accepted.
func TestReconcileRaisesTheFloor(t *testing.T) {
	t.Parallel()
	w := New()
	require.False(t, w.Reconcile("1:charge", 3), "nothing accepted yet")
	require.ErrorIs(t, w.Invoke("1:charge", 1), ErrStaleToken, "the paused holder's late call")
	require.NoError(t, w.Invoke("1:charge", 3))
	require.True(t, w.Reconcile("1:charge", 5))
	require.Equal(t, map[string]int{"1:charge": 1}, w.Accepted())
}

// TestIdempotentWitnessDedupsByKey: an idempotent witness checks the fence
// first — a lower token is refused even for a key already applied — and
// then applies only a key's first accepted call, answering every later one
// with the first result. A fence-only witness applies every accepted call.
func TestIdempotentWitnessDedupsByKey(t *testing.T) {
	t.Parallel()
	w := NewIdempotent()
	r, err := w.Apply("7:charge", 2, []byte("first"))
	require.NoError(t, err)
	require.Equal(t, Reply{Result: []byte("first")}, r)
	_, err = w.Apply("7:charge", 1, []byte("zombie"))
	require.ErrorIs(t, err, ErrStaleToken, "a lower token is refused before the key is looked at")
	r, err = w.Apply("7:charge", 5, []byte("next holder"))
	require.NoError(t, err)
	require.Equal(t, Reply{Result: []byte("first"), Deduped: true}, r, "the next holder gets the first result")
	require.ErrorIs(t, w.Invoke("7:charge", 2), ErrStaleToken, "the accepted 5 raised the key's token")
	require.NoError(t, w.Invoke("7:email", 1), "keys are independent")

	require.Equal(t, map[string]int{"7:charge": 1, "7:email": 1}, w.Applied())
	require.Equal(t, map[string]int{"7:charge": 2, "7:email": 1}, w.Accepted())
	require.Equal(t, []Invocation{
		{Key: "7:charge", Fence: 2, Accepted: true},
		{Key: "7:charge", Fence: 1},
		{Key: "7:charge", Fence: 5, Accepted: true, Deduped: true},
		{Key: "7:charge", Fence: 2},
		{Key: "7:email", Fence: 1, Accepted: true},
	}, w.Invocations())

	plain := New()
	for _, f := range []int64{1, 2} {
		r, err := plain.Apply("7:charge", f, []byte{byte('0' + f)})
		require.NoError(t, err)
		require.False(t, r.Deduped)
		require.Equal(t, []byte{byte('0' + f)}, r.Result)
	}
	require.Equal(t, map[string]int{"7:charge": 2}, plain.Applied(), "a fence-only witness applies every accepted call")
}
