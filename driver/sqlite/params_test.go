package sqlite

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChunkStatementsUseAnonymousParameters: the multi-row statements bind
// hundreds of parameters per call, and a numbered one ("?12") costs the
// driver a linear search of the statement's names on every bind
// (valuesCTE), so they use "?" only, as many as the binding code lays out.
func TestChunkStatementsUseAnonymousParameters(t *testing.T) {
	numbered := regexp.MustCompile(`\?[0-9]`)
	for _, c := range []struct {
		name, sql string
		params    int
	}{
		{"complete chunk", runCompleteChunkSQL, 3*completeChunk + 1},
		{"renew chunk", runRenewChunkSQL, 3*renewChunk + 3},
		{"event insert chunk", eventInsertChunkSQL, 5*eventChunk + 2}, // + the chunk's first id and created_at
		{"run insert chunk", runInsertChunkSQL, 5*enqueueChunk + 1},
	} {
		require.False(t, numbered.MatchString(c.sql), "%s: a numbered parameter", c.name)
		require.Equal(t, c.params, strings.Count(c.sql, "?"), "%s: parameters", c.name)
	}
	// The planted revival bug (a -tags simbugs build) finds what it removes.
	require.Contains(t, runRenewChunkSQL, revivalCheck)
}
