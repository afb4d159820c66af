package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestModeSwitchedOnALiveServeThroughTheCLI is the rollout rehearsed on
// the real binary: `leasehold serve` started dark (from
// $LEASEHOLD_HEARTBEAT_MODE) with two in-process echo workers, then
// switched dark → writebehind → sync → writebehind with `leasehold mode
// set --all` while runs that outlive several renewal periods are held.
// /metrics shows each switch for each worker and the mode in force, and
// no lease is lost: the keeper counts none lost and no self-stop, and
// every run completed on its first attempt (a lost lease is reclaimed and
// retried, a second attempt).
func TestModeSwitchedOnALiveServeThroughTheCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "leasehold")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	// Timing /15: T_lease 6s, T_renew 1s, T_drain ~333ms, D_stop 3s, S 1s —
	// a run sleeping 2.2s is renewed twice or more. (/30 left a D_stop of
	// 1.5s, which a drain missed under CI load: 12 self-stops.)
	srv := exec.Command(bin, "serve", "--db", filepath.Join(dir, "lh.db"), "--listen", "127.0.0.1:0",
		"--echo-queue", "q", "--echo-workers", "2", "--run-timing-scale", "15")
	srv.Env = append(os.Environ(), "LEASEHOLD_HEARTBEAT_MODE=dark")
	stdout, err := srv.StdoutPipe()
	require.NoError(t, err)
	var stderr lockedBuffer // the process writes it while the test reads it
	srv.Stderr = &stderr
	require.NoError(t, srv.Start())
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	t.Cleanup(func() {
		_ = srv.Process.Kill() // only if the test failed before its own stop
	})
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var base, token string
	for base == "" {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "serve exited early: %s", stderr.String())
			if m := regexp.MustCompile(`admin token: (lh_\S+)`).FindStringSubmatch(l); m != nil {
				token = m[1]
			}
			if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(l); m != nil {
				base = m[1]
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("serve did not listen: %s", stderr.String())
		}
	}
	require.NotEmpty(t, token)

	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--server", base, "--token", token)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "leasehold %s: %s", strings.Join(args, " "), out)
		return string(out)
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	call := func(method, path, body string) []byte {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Less(t, resp.StatusCode, 300, "%s %s: %s", method, path, b)
		return b
	}
	// work enqueues n runs of 2.2s each and waits for all of them to end.
	var ids []int64
	work := func(n int) {
		t.Helper()
		var items []string
		for range n {
			items = append(items, `{"queue":"q","payload":{"sleep_ms":2200},"max_attempts":3}`)
		}
		var enq struct {
			Runs []struct {
				Run struct{ ID int64 } `json:"run"`
			} `json:"runs"`
		}
		require.NoError(t, json.Unmarshal(call("POST", "/v1/runs", `{"runs":[`+strings.Join(items, ",")+`]}`), &enq))
		for _, r := range enq.Runs {
			ids = append(ids, r.Run.ID)
			deadline := time.Now().Add(60 * time.Second) // a bound: each run takes 2.2s
			for {
				var got struct {
					Run struct {
						State   string
						Attempt int
					} `json:"run"`
				}
				require.NoError(t, json.Unmarshal(call("GET", fmt.Sprintf("/v1/runs/%d", r.Run.ID), ""), &got))
				if got.Run.State == "completed" {
					require.Equal(t, 1, got.Run.Attempt, "run %d: completed on its first attempt", r.Run.ID)
					break
				}
				require.True(t, time.Now().Before(deadline), "run %d still %s", r.Run.ID, got.Run.State)
				time.Sleep(50 * time.Millisecond) // polling the run's state, bounded above
			}
		}
	}

	require.Regexp(t, `echo-1\s+dark\s*\n.*echo-2\s+dark`, cli("mode", "get"), "started dark from the environment")
	work(24)
	for _, m := range []struct{ to, from string }{{"writebehind", "dark"}, {"sync", "writebehind"}, {"writebehind", "sync"}} {
		out := cli("mode", "set", m.to, "--all")
		require.Regexp(t, fmt.Sprintf(`echo-1\s+%s\s+%s\s*\n.*echo-2\s+%s\s+%s`, m.to, m.from, m.to, m.from), out)
		work(24)
	}
	out := cli("mode", "set", "dark", "--worker", "echo-2")
	require.Regexp(t, `echo-2\s+dark\s+writebehind`, out)
	require.NotContains(t, out, "echo-1", "one worker only")
	cli("mode", "set", "writebehind", "--worker", "echo-2")

	metrics := string(call("GET", "/metrics", ""))
	t.Logf("/metrics (mode and loss series):\n%s", grepLines(metrics, "leasehold_keeper_mode", "leasehold_keeper_leases_lost_total", "leasehold_keeper_self_stops_total", "leasehold_keeper_flushes_total"))
	for _, w := range []string{"echo-1", "echo-2"} {
		for _, sw := range [][2]string{{"dark", "writebehind"}, {"writebehind", "sync"}, {"sync", "writebehind"}} {
			want := 1
			if w == "echo-2" && sw[0] == "dark" {
				want = 2 // and back from its own dark spell
			}
			require.Contains(t, metrics, fmt.Sprintf(`leasehold_keeper_mode_switches_total{from=%q,kind="runs",to=%q,worker=%q} %d`, sw[0], sw[1], w, want))
		}
		require.Contains(t, metrics, fmt.Sprintf(`leasehold_keeper_mode{kind="runs",mode="writebehind",worker=%q} 1`, w))
		require.Contains(t, metrics, fmt.Sprintf(`leasehold_keeper_leases_lost_total{kind="runs",worker=%q} 0`, w))
		require.Contains(t, metrics, fmt.Sprintf(`leasehold_keeper_self_stops_total{kind="runs",worker=%q} 0`, w))
	}
	require.Regexp(t, `leasehold_keeper_flushes_total\{kind="runs",result="ok",worker="echo-1"\} [1-9]`, metrics, "the drain ran")
	require.Len(t, ids, 96)

	// Refusals: a bad mode, both or neither target, a non-admin token.
	for _, args := range [][]string{{"mode", "set", "fast", "--all"}, {"mode", "set", "sync"}, {"mode", "set", "sync", "--all", "--worker", "echo-1"}, {"mode", "set", "sync", "--worker", "echo-9"}} {
		b, err := exec.Command(bin, append(args, "--server", base, "--token", token)...).CombinedOutput()
		require.Error(t, err, "%v: %s", args, b)
	}
	var minted struct{ Secret string }
	require.NoError(t, json.Unmarshal(call("POST", "/v1/tokens", `{"name":"worker","scopes":["work:queue:*"]}`), &minted))
	require.NotEmpty(t, minted.Secret)
	b, err := exec.Command(bin, "mode", "set", "sync", "--all", "--server", base, "--token", minted.Secret).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(b), "forbidden")
	require.Contains(t, cli("mode", "get"), "writebehind", "nothing switched by the refusals")

	require.NoError(t, srv.Process.Signal(os.Interrupt))
	select {
	case err := <-exited:
		require.NoError(t, err, "%s", stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop on SIGINT")
	}
	require.Contains(t, stderr.String(), `heartbeat mode switched`)
}

// grepLines keeps the lines of s that start with one of the prefixes.
func grepLines(s string, prefixes ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// lockedBuffer is a bytes.Buffer safe to write from exec's copying
// goroutine while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
