package libsql

import (
	sqldriver "database/sql/driver"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNumbered: ?N becomes ? with the argument order recorded; strings,
// quoted identifiers and comments are left alone; a statement with bare ?
// only is unchanged.
func TestNumbered(t *testing.T) {
	for _, c := range []struct {
		in, out string
		order   []int
	}{
		{"SELECT ?2, ?1, ?2", "SELECT ?, ?, ?", []int{2, 1, 2}},
		{"SELECT ?, ?", "SELECT ?, ?", nil},
		{"SELECT '?1', \"a?2\", ?3 -- ?4\n, ?1 /* ?5 */", "SELECT '?1', \"a?2\", ? -- ?4\n, ? /* ?5 */", []int{3, 1}},
		{"SELECT ?, ?, ?3", "SELECT ?, ?, ?", []int{1, 2, 3}},
		{"SELECT 1", "SELECT 1", nil},
	} {
		out, order := numbered(c.in)
		require.Equal(t, c.out, out, c.in)
		require.Equal(t, c.order, order, c.in)
	}
}

// TestInOrder: arguments are laid out per the order; a parameter without
// an argument is refused, never bound as NULL.
func TestInOrder(t *testing.T) {
	args := []sqldriver.NamedValue{{Ordinal: 1, Value: "a"}, {Ordinal: 2, Value: int64(2)}}
	got, err := inOrder([]int{2, 1, 2}, args)
	require.NoError(t, err)
	require.Equal(t, []sqldriver.NamedValue{{Ordinal: 1, Value: int64(2)}, {Ordinal: 2, Value: "a"}, {Ordinal: 3, Value: int64(2)}}, got)
	_, err = inOrder([]int{3}, args)
	require.ErrorContains(t, err, "?3 of 2 arguments")
	same, err := inOrder(nil, args)
	require.NoError(t, err)
	require.Equal(t, args, same)
}
