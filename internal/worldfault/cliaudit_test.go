package worldfault

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/servetest"
	"github.com/leasehold/leasehold/journal"
)

var cliSignatures = regexp.MustCompile(`OK: hash chain verified; (\d+) signatures verified, covering (\d+) entries`)

// cliAudit ends a walkthrough the way an operator would: the journal
// exported as JSONL (the format `leasehold export` writes) and audited by
// the real `leasehold audit --file` binary, which must exit 0, print the
// same spans as the in-process audit, and verify every signed batch.
func cliAudit(t *testing.T, es []journal.Entry, rep journal.Report, signed int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "world.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	w := journal.NewWriter(f)
	for i := range es {
		require.NoError(t, w.Write(&es[i]))
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())

	out, err := exec.Command(servetest.Binary(t), "audit", "--file", path).CombinedOutput()
	require.NoError(t, err, "leasehold audit --file:\n%s", out)
	m := cliSignatures.FindSubmatch(out)
	require.NotNil(t, m, "leasehold audit printed no OK line:\n%s", out)
	n, _ := strconv.Atoi(string(m[1]))
	require.Equal(t, signed, n, "leasehold audit verified every signed batch:\n%s", out)
	for _, sp := range rep.Spans {
		holder := sp.Holder
		if holder == "" {
			holder = "(nobody: epoch revoked)"
		}
		line := "positions " + strconv.FormatInt(sp.From, 10) + "-" + strconv.FormatInt(sp.To, 10) + ": epoch " +
			strconv.FormatInt(sp.Epoch, 10) + " held by " + holder
		require.Contains(t, string(out), line, "leasehold audit shows the same holder for every position")
	}
	return string(m[0])
}
