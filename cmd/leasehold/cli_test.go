package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/testdb"
)

// cliOut runs one command line in-process and returns its stdout, its
// stderr and its exit code apart: a --json answer must be on stdout
// alone, parseable as it stands.
func cliOut(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// testStores are the two stores a --db can name: a fresh SQLite file and
// a fresh Postgres schema (search_path in the URL, as an operator would
// write it).
func testStores(t *testing.T) map[string]string {
	url, schema := testdb.Schema(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return map[string]string{
		"sqlite":   filepath.Join(t.TempDir(), "lh.db"),
		"postgres": url + sep + "search_path=" + schema,
	}
}

// TestUsageErrorsExitTwo: every way of getting the command line wrong
// exits 2 with the error and a pointer to --help on stderr, and nothing on
// stdout; none of them touches the store.
func TestUsageErrorsExitTwo(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lh.db")
	for _, c := range []struct {
		args  []string
		says  string
		opens bool // refused by the library, where input enters it: after opening the store
	}{
		{[]string{}, "no command given", false},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`, false},
		{[]string{"runs", "frobnicate"}, `unknown command "frobnicate"`, false},
		{[]string{"tokens"}, "needs a subcommand", false},
		{[]string{"runs", "ls", "--no-such-flag"}, "unknown flag: --no-such-flag", false},
		{[]string{"doctor", "--samples", "many"}, `invalid argument "many"`, false},
		{[]string{"doctor", "--samples", "1"}, "--samples 1", false},
		{[]string{"runs", "show"}, "needs one run ID", false},
		{[]string{"runs", "show", "x1"}, `run ID "x1": want a positive integer`, false},
		{[]string{"runs", "cancel", "1", "2"}, "needs one run ID, got 2", false},
		{[]string{"migrate", "extra"}, "takes no argument", false},
		{[]string{"enqueue"}, "needs --queue", false},
		{[]string{"enqueue", "--queue", "q", "--count", "2", "--unique-key", "k"}, "--unique-key with --count 2", false},
		{[]string{"enqueue", "--queue", "q", "--priority", "-1"}, "priority", true},
		{[]string{"enqueue", "--queue", "q", "--payload", "{not json"}, "payload", true},
		{[]string{"mode", "set", "sync"}, "needs --worker NAME or --all", false},
		{[]string{"audit"}, "give exactly one of --world or --file", false},
	} {
		args := c.args
		if len(args) > 1 && args[0] != "mode" {
			store := db
			if c.opens {
				store = filepath.Join(t.TempDir(), "opened.db")
			}
			args = append(args, "--db", store)
		}
		out, errOut, code := cliOut(args...)
		require.Equal(t, exitUsage, code, "%v: %s", args, errOut)
		require.Contains(t, errOut, c.says, "%v", args)
		require.Contains(t, errOut, "--help' for usage", "%v", args)
		require.Empty(t, out, "%v: a usage error prints nothing on stdout", args)
	}
	_, err := os.Stat(db)
	require.True(t, os.IsNotExist(err), "no usage error the CLI finds opened the store")
}

// TestEnqueueAndRunsOnBothStores: `enqueue` (one run, and --count N in
// batches), `runs ls|show --json` parsed as JSON, `runs cancel|unblock`
// and their exit codes — not found 3, a state that does not allow it 4 —
// on SQLite and Postgres alike.
func TestEnqueueAndRunsOnBothStores(t *testing.T) {
	t.Parallel()
	for name, db := range testStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cli := func(want int, args ...string) string {
				t.Helper()
				out, errOut, code := cliOut(append(args, "--db", db, "--no-progress")...)
				require.Equal(t, want, code, "%v: %s%s", args, out, errOut)
				return out
			}
			// One run, with a unique key: the second enqueue returns the first.
			var one []enqueuedJSON
			require.NoError(t, json.Unmarshal([]byte(cli(0, "enqueue", "--queue", "emails", "--payload", `{"to": "ada"}`,
				"--unique-key", "welcome-ada", "--json")), &one))
			require.Len(t, one, 1)
			require.False(t, one[0].Existing)
			require.Equal(t, "available", one[0].State)
			require.JSONEq(t, `{"to":"ada"}`, string(one[0].Payload))
			require.Contains(t, cli(0, "enqueue", "--queue", "emails", "--unique-key", "welcome-ada"),
				"exists already under unique key \"welcome-ada\"")

			// 2,500 runs: three batches of at most 1,000.
			out := cli(0, "enqueue", "--queue", "bulk", "--count", "2500", "--max-attempts", "3")
			m := regexp.MustCompile(`^enqueued 2500 runs on bulk: ids (\d+)\.\.(\d+)\n$`).FindStringSubmatch(out)
			require.NotNil(t, m, out)
			var page []runJSON
			require.NoError(t, json.Unmarshal([]byte(cli(0, "runs", "ls", "--queue", "bulk", "--limit", "1000", "--json")), &page))
			require.Len(t, page, 1000)
			for _, r := range page {
				require.Equal(t, "bulk", r.Queue)
				require.Equal(t, 3, r.MaxAttempts)
			}
			var qs []queueJSON
			require.NoError(t, json.Unmarshal([]byte(cli(0, "queues", "ls", "--json")), &qs))
			counts := map[string]int64{}
			for _, q := range qs {
				counts[q.Name] = q.Counts["available"]
			}
			require.Equal(t, map[string]int64{"emails": 1, "bulk": 2500}, counts)

			id := strconv.FormatInt(one[0].ID, 10)
			var shown runJSON
			require.NoError(t, json.Unmarshal([]byte(cli(0, "runs", "show", id, "--json")), &shown))
			require.Equal(t, one[0].ID, shown.ID)
			require.Equal(t, "welcome-ada", shown.UniqueKey)
			require.Contains(t, cli(0, "runs", "show", id), "run "+id+" on emails: available")

			cli(exitNotFound, "runs", "show", "999999")
			cli(exitNotFound, "runs", "cancel", "999999")
			cli(exitConflict, "runs", "unblock", id) // not blocked
			require.Contains(t, cli(0, "runs", "cancel", id, "--reason", "not needed"), "cancelled")
			cli(exitConflict, "runs", "cancel", id) // finished already
			require.NoError(t, json.Unmarshal([]byte(cli(0, "runs", "show", id, "--json")), &shown))
			require.Equal(t, "cancelled", shown.State)
			require.Equal(t, "not needed", shown.Reason)
			cli(exitConflict, "runs", "retry", id, "--fence", strconv.FormatInt(shown.Fence+1, 10)) // a fence it never had
			require.Contains(t, cli(0, "runs", "retry", id, "--fence", strconv.FormatInt(shown.Fence, 10)), "run "+id+" on emails: available")
			cli(exitConflict, "runs", "retry", id) // available: nothing to retry
			cli(exitNotFound, "runs", "retry", "999999")
			require.NotNil(t, shown.FinishedAt)
		})
	}
}

// TestJSONListingsParse: every listing's --json is JSON on stdout alone,
// with the field names the *JSON types fix — worlds and tokens too.
func TestJSONListingsParse(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lh.db")
	out, errOut, code := cliOut("demo", "--db", db, "--world", "w1", "--hosts=false")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "OK: hash chain verified")

	out, _, code = cliOut("worlds", "ls", "--db", db, "--json")
	require.Equal(t, 0, code)
	var ws []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &ws))
	require.Len(t, ws, 1)
	keys := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		return ks
	}
	require.ElementsMatch(t, []string{"world", "position", "epoch", "holder", "expires_at", "granted_at", "home"}, keys(ws[0]))
	require.Equal(t, "w1", ws[0]["world"])
	require.Equal(t, float64(9), ws[0]["position"])

	_, errOut, code = cliOut("tokens", "create", "--db", db, "--scope", "read", "--name", "a")
	require.Equal(t, 0, code, errOut)
	_, errOut, code = cliOut("tokens", "create", "--db", db, "--scope", "admin")
	require.Equal(t, 0, code, errOut)
	out, _, code = cliOut("tokens", "ls", "--db", db, "--json")
	require.Equal(t, 0, code)
	sc := bufio.NewScanner(strings.NewReader(out)) // one object per line
	n := 0
	for sc.Scan() {
		var tok map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &tok))
		require.Contains(t, tok, "id")
		require.Contains(t, tok, "scopes")
		require.Contains(t, tok, "created_at")
		n++
	}
	require.Equal(t, 2, n)

	out, _, code = cliOut("runs", "--db", db, "--json")
	require.Equal(t, 0, code)
	require.JSONEq(t, "[]", out, "an empty listing is an empty array, not null")
}

// TestCompletionScripts: `completion bash|zsh|fish` print a script for
// the tree (exit 0); bash's completes the commands through cobra's
// __complete, which answers with the subcommands.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	out, errOut, code := cliOut("completion", "bash")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "# bash completion V2 for leasehold")
	require.Contains(t, out, "__start_leasehold")
	for _, shell := range []string{"zsh", "fish"} {
		out, errOut, code := cliOut("completion", shell)
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, "leasehold", shell)
	}
	out, _, code = cliOut("__complete", "runs", "")
	require.Equal(t, 0, code)
	for _, sub := range []string{"ls", "show", "cancel", "unblock", "retry"} {
		require.Regexp(t, "(?m)^"+sub+"\t", out)
	}
	out, _, code = cliOut("__complete", "enqueue", "--qu")
	require.Equal(t, 0, code)
	require.Contains(t, out, "--queue")
	_, _, code = cliOut("completion", "tcsh")
	require.Equal(t, exitUsage, code)
}

// TestREADMEExitCodesMatchTheCode: the README's exit-code table lists
// exactly the codes exitcode.go defines, in order, with their meanings.
func TestREADMEExitCodesMatchTheCode(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	readme := string(b)
	i := strings.Index(readme, "\n### Exit codes\n")
	require.Positive(t, i, "the README has an Exit codes section")
	row := regexp.MustCompile(`^\| (\d+) +\| ([^|]+?) +\|`)
	type entry struct {
		Code    int
		Meaning string
	}
	var got []entry
	for _, l := range strings.Split(readme[i+1:], "\n")[1:] {
		if strings.HasPrefix(l, "#") {
			break // the next section
		}
		if m := row.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			got = append(got, entry{n, m[2]})
		}
	}
	var want []entry
	for _, e := range exitCodes {
		want = append(want, entry{e.Code, e.Meaning})
	}
	require.Equal(t, want, got)
}
