package faulttest

import (
	"encoding/json"
	"io"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/faultproxy"
)

// workerProc is a running worker process and its fault proxy.
type workerProc struct {
	owner string
	proxy *faultproxy.Proxy
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *tailBuffer
	done  chan struct{} // closed once the process was waited for
	err   error         // cmd.Wait's, valid after done
}

// startWorker starts worker process owner behind a fault proxy of its own.
// It is killed and waited for when the test ends, whatever happened.
func (s *scenario) startWorker(owner string, opts ...func(*workerConfig)) *workerProc {
	t := s.t
	t.Helper()
	proxy, err := faultproxy.New(s.db.addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() }) // after the process is gone (cleanups run last-in first-out)
	u, err := url.Parse(s.db.url)
	require.NoError(t, err)
	u.Host = proxy.Addr()
	cfg := workerConfig{Owner: owner, PostgresURL: u.String(), Schema: s.db.schema, ObserverURL: s.srv.URL,
		Concurrency: concurrency, Timing: timing,
		AcquireTimeout: acquireTimeout, StatementTimeout: statementTimeout,
		Effects: s.cfg.Effects, EffectMax: effectMax, EffectWork: s.cfg.EffectWork, Life: workerLife}
	for _, o := range opts {
		o(&cfg)
	}
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), workerEnv+"="+string(raw))
	p := &workerProc{owner: owner, proxy: proxy, cmd: cmd, out: &tailBuffer{max: 64 << 10}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	// Held open for the process's life: it stops on EOF, so it cannot
	// outlive this one.
	p.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // also ends a stopped process
		<-p.done
		if t.Failed() {
			t.Logf("worker %s output (tail):\n%s", owner, p.out.String())
		}
	})
	s.workers = append(s.workers, p)
	return p
}

// stopWorkers stops every worker process that is still alive by closing
// its stdin, and requires each to exit 0 (a graceful stop) in time.
func (s *scenario) stopWorkers() {
	s.t.Helper()
	for _, p := range s.workers {
		if !p.exited() {
			_ = p.stdin.Close()
		}
	}
	for _, p := range s.workers {
		if p.killed() {
			continue
		}
		select {
		case <-p.done:
		case <-time.After(patience):
			s.t.Fatalf("worker %s did not stop within %v", p.owner, patience)
		}
		require.NoError(s.t, p.err, "worker %s exit\n%s", p.owner, p.out.String())
	}
}

func (p *workerProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// killed reports whether the process ended by a signal.
func (p *workerProc) killed() bool {
	if !p.exited() {
		return false
	}
	ee, ok := p.err.(*exec.ExitError)
	if !ok {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
