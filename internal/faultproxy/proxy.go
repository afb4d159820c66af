package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Proxy forwards TCP connections from a loopback listener to one target and
// injects faults into what it forwards. Its methods are safe for concurrent
// use.
type Proxy struct {
	target string
	ln     *net.TCPListener

	// ctx is cancelled by Close so that a dial to a target that does not
	// answer never holds Close up.
	ctx    context.Context
	cancel context.CancelFunc

	// wg counts every goroutine the proxy starts; Close waits for it.
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	stats counters

	// mu protects the fields below and link.lost on every link. It is never
	// held across I/O or a wait.
	mu     sync.Mutex
	faults faults
	// changed is closed and replaced on every fault change, waking writers
	// that hold a chunk so they recompute when it may go.
	changed chan struct{}
	links   map[*link]struct{}
	closed  bool
}

// New listens on 127.0.0.1:0 and forwards every accepted connection to
// target ("host:port"). The target is dialed once per accepted connection,
// not here, so it need not be up yet.
func New(target string) (*Proxy, error) {
	if _, _, err := net.SplitHostPort(target); err != nil {
		return nil, fmt.Errorf("faultproxy: target %q: %w", target, err)
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listening: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		target:  target,
		ln:      ln,
		ctx:     ctx,
		cancel:  cancel,
		changed: make(chan struct{}),
		links:   make(map[*link]struct{}),
	}
	p.wg.Go(p.acceptLoop)
	return p, nil
}

// Addr is the "127.0.0.1:port" to dial instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops listening, closes every connection without delivering what is
// still queued, and returns once every goroutine of the proxy has exited.
// Later calls return the first call's result.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		// After closed is set no new link is registered (see connect), so
		// the snapshot below is every link there will ever be.
		p.closed = true
		links := p.linksLocked()
		p.mu.Unlock()

		p.cancel()
		if err := p.ln.Close(); err != nil {
			p.closeErr = fmt.Errorf("faultproxy: closing listener: %w", err)
		}
		for _, l := range links {
			l.close(false)
		}
		p.wg.Wait()
	})
	return p.closeErr
}

func (p *Proxy) acceptLoop() {
	for {
		c, err := p.ln.AcceptTCP()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A transient error (EMFILE in a stress test, say) must not end
			// the proxy; back off briefly, but not past Close.
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		p.stats.accepted.Add(1)
		p.wg.Go(func() { p.connect(c) })
	}
}

// connect dials the target for an accepted client and starts forwarding. It
// runs in its own goroutine so a slow dial does not hold up other accepts.
func (p *Proxy) connect(client *net.TCPConn) {
	var d net.Dialer
	c, err := d.DialContext(p.ctx, "tcp", p.target)
	if err != nil {
		// The client has been accepted already; a reset is the nearest a
		// proxy can come to the refusal it would have seen dialing directly.
		_ = client.SetLinger(0)
		_ = client.Close()
		return
	}
	l := newLink(p, client, c.(*net.TCPConn))

	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.close(false)
		return
	}
	p.links[l] = struct{}{}
	p.mu.Unlock()

	// Safe to add to p.wg here: this goroutine is itself counted, so the
	// counter cannot be zero while Close waits.
	l.start()
}

// linksLocked returns the current links; p.mu must be held.
func (p *Proxy) linksLocked() []*link {
	out := make([]*link, 0, len(p.links))
	for l := range p.links {
		out = append(out, l)
	}
	return out
}

func (p *Proxy) forget(l *link) {
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
}
