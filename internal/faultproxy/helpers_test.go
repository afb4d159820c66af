package faultproxy_test

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/faultproxy"
)

// ioTimeout bounds every blocking read or write in the tests, so a broken
// proxy fails a test instead of hanging the package.
const ioTimeout = 5 * time.Second

type testBundle struct {
	echo  *server
	proxy *faultproxy.Proxy
}

// setup starts an echo server and a proxy in front of it. Cleanups close the
// proxy, then the server, after the test's own connections.
func setup(t *testing.T) *testBundle {
	t.Helper()
	echo := startServer(t, echoConn)
	p, err := faultproxy.New(echo.addr())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	return &testBundle{echo: echo, proxy: p}
}

// dial connects to the proxy; the connection is closed when the test ends.
func (b *testBundle) dial(t *testing.T) *net.TCPConn {
	t.Helper()
	return dial(t, b.proxy.Addr())
}

func dial(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, ioTimeout)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c.(*net.TCPConn)
}

// roundTrip sends msg and requires it back unchanged.
func roundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(ioTimeout)))
	_, err := c.Write([]byte(msg))
	require.NoError(t, err)
	got := make([]byte, len(msg))
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	require.Equal(t, msg, string(got))
}

// requireSilent requires that nothing arrives on c within d.
func requireSilent(t *testing.T, c net.Conn, d time.Duration) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(d)))
	n, err := c.Read(make([]byte, 1))
	require.Zero(t, n)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout(), "want a read timeout, got %v", err)
}

// server is a loopback TCP server that runs handle on every connection and
// closes everything, waiting for its goroutines, when the test ends.
type server struct {
	ln     net.Listener
	handle func(c *net.TCPConn, quit <-chan struct{})
	quit   chan struct{} // closed by close, for handlers that park
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

func startServer(t *testing.T, handle func(c *net.TCPConn, quit <-chan struct{})) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &server{ln: ln, handle: handle, quit: make(chan struct{}), conns: make(map[net.Conn]struct{})}
	s.wg.Go(s.acceptLoop)
	t.Cleanup(s.close)
	return s
}

func (s *server) addr() string { return s.ln.Addr().String() }

func (s *server) acceptLoop() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Go(func() {
			s.handle(c.(*net.TCPConn), s.quit)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			_ = c.Close()
		})
	}
}

func (s *server) close() {
	s.mu.Lock()
	s.closed = true
	close(s.quit)
	_ = s.ln.Close()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// echoConn writes back whatever it reads and passes on the peer's
// half-close, so tests see EOF travel through the proxy both ways.
func echoConn(c *net.TCPConn, _ <-chan struct{}) {
	if _, err := io.Copy(c, c); err == nil {
		_ = c.CloseWrite()
		// Wait for the peer's close so our close does not race unread data
		// into a reset; a closed or reset connection ends the read.
		_, _ = c.Read(make([]byte, 1))
	}
}

// sinkConn accepts data into the kernel buffers and never reads, so a sender
// through the proxy eventually blocks. It returns when the server closes.
func sinkConn(_ *net.TCPConn, quit <-chan struct{}) { <-quit }
