// Package curl_test runs the README's curl walkthrough against the real
// `leasehold serve`.
package curl_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/servetest"
)

// step is one command of the walkthrough and the output the README shows
// for it: fragments separated by "…", each of which must appear, in order.
type step struct {
	cmd  string
	want []string
}

// walkthrough reads the first console block of the README's "Serve"
// section: "$ curl …" lines are commands (other commands — starting the
// server — are the test's own doing), the lines after one its output.
func walkthrough(t *testing.T) []step {
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	defer f.Close()
	var steps []step
	section, block := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			section = line == "## Serve: the HTTP API"
		case section && !block && line == "```console":
			block = true
		case block && line == "```":
			return steps
		case block && strings.HasPrefix(line, "$ curl "):
			steps = append(steps, step{cmd: strings.TrimPrefix(line, "$ ")})
		case block && strings.HasPrefix(line, "$ "):
			steps = append(steps, step{}) // not ours: its output is not checked
		case block && line != "" && len(steps) > 0 && steps[len(steps)-1].cmd != "":
			s := &steps[len(steps)-1]
			for _, frag := range strings.Split(line, "…") {
				if frag != "" {
					s.want = append(s.want, frag)
				}
			}
		}
	}
	t.Fatal("README.md has no console block under \"## Serve: the HTTP API\"")
	return nil
}

// TestREADMECurlWalkthrough: every curl command of the README's walkthrough,
// run in order against `leasehold serve` on a fresh SQLite file, answers
// what the README shows.
func TestREADMECurlWalkthrough(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("curl is required in CI for the README walkthrough")
		}
		t.Skip("SKIPPED LOUDLY: curl is not installed; the README walkthrough was not run")
	}
	steps := walkthrough(t)
	srv := servetest.Start(t, "--db", filepath.Join(t.TempDir(), "lh.db"))
	require.NotEmpty(t, srv.Token, "the first start minted an admin token")
	host := strings.TrimPrefix(srv.URL, "http://")
	ran := 0
	for _, s := range steps {
		if s.cmd == "" {
			continue
		}
		cmd := strings.ReplaceAll(s.cmd, "localhost:7460", host)
		sh := exec.Command("sh", "-c", cmd)
		sh.Env = append(os.Environ(), "H=Authorization: Bearer "+srv.Token) // the README's export H=…
		out, err := sh.CombinedOutput()
		require.NoError(t, err, "%s\n%s", cmd, out)
		got := string(out)
		t.Logf("$ %s\n%s", s.cmd, got)
		rest := got
		for _, w := range s.want {
			i := strings.Index(rest, w)
			require.GreaterOrEqual(t, i, 0, "$ %s\nthe README shows %q (in this order); the server answered\n%s", s.cmd, w, got)
			rest = rest[i+len(w):]
		}
		ran++
	}
	require.GreaterOrEqual(t, ran, 6, "the walkthrough's curl commands")
	srv.Stop(t)
}
