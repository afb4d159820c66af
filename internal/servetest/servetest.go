// Package servetest starts the real `leasehold serve` binary for tests of
// what runs against it from outside Go — the Python worker, the README's
// curl walkthrough: it builds cmd/leasehold once per test binary, starts it
// on a loopback port the kernel picks, and stops it with SIGINT, checking
// that it shut down cleanly.
package servetest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary builds cmd/leasehold (once per test binary) and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		_, here, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(here), "..", "..")
		dir, err := os.MkdirTemp("", "leasehold-servetest-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "leasehold")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/leasehold")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/leasehold: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// Server is a running `leasehold serve`.
type Server struct {
	URL string // http://127.0.0.1:<port>
	// Token is the admin token the first start on a store mints and
	// prints once ("" when the store had a live token already).
	Token string
	cmd   *exec.Cmd
	out   *strings.Builder
	mu    *sync.Mutex
	end   chan error

	exited atomic.Bool // set once Wait returned
}

var (
	listening = regexp.MustCompile(`listening on (http://\S+)`)
	minted    = regexp.MustCompile(`admin token: (lh_\S+)`)
)

// Start runs `leasehold serve --listen 127.0.0.1:0` with args (e.g.
// "--db", path) and returns once it listens. It is stopped when the test
// ends, if the test did not Stop it.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	cmd := exec.Command(Binary(t), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{cmd: cmd, out: &strings.Builder{}, mu: &sync.Mutex{}, end: make(chan error, 1)}
	cmd.Stderr = &lockedWriter{s}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.out.WriteString(line + "\n")
			s.mu.Unlock()
			if m := minted.FindStringSubmatch(line); m != nil {
				s.Token = m[1] // before the listening line: Start reads it after the URL arrives
			}
			if m := listening.FindStringSubmatch(line); m != nil {
				urls <- m[1]
			}
		}
		err := cmd.Wait()
		s.exited.Store(true)
		s.end <- err
	}()
	t.Cleanup(func() { // the process this test started
		if !s.exited.Load() {
			_ = cmd.Process.Kill()
		}
	})
	select {
	case s.URL = <-urls:
	case err := <-s.end:
		t.Fatalf("leasehold serve exited before listening: %v\n%s", err, s.Output())
	case <-time.After(2 * time.Minute): // a bound on a loaded machine, not a timing guess
		t.Fatalf("leasehold serve did not listen within 2 minutes\n%s", s.Output())
	}
	return s
}

// Output is what the server printed so far (stdout and stderr).
func (s *Server) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// Stop sends SIGINT and waits for a clean exit; it fails the test if the
// server did not exit 0 or did not report its shutdown.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	select {
	case err := <-s.end:
		if err != nil {
			t.Fatalf("leasehold serve: %v\n%s", err, s.Output())
		}
	case <-ctx.Done():
		t.Fatalf("leasehold serve did not stop within a minute of SIGINT\n%s", s.Output())
	}
	if !strings.Contains(s.Output(), "shutting down") {
		t.Fatalf("leasehold serve did not report its shutdown:\n%s", s.Output())
	}
}

type lockedWriter struct{ s *Server }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.out.Write(p)
}

var _ io.Writer = (*lockedWriter)(nil)
