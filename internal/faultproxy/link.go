package faultproxy

import (
	"net"
	"sync"
	"sync/atomic"
)

// link is one proxied connection: an accepted client paired with its own
// connection to the target, carried by two pipes (four goroutines).
type link struct {
	p      *Proxy
	client *net.TCPConn
	target *net.TCPConn

	// done is closed when the link closes; every wait in its pipes watches
	// it, which is what lets Close and ResetAll interrupt a held chunk.
	done      chan struct{}
	closeOnce sync.Once

	// halfClosed counts directions that have forwarded their FIN; when
	// both have, the link is finished and closes itself.
	halfClosed atomic.Int32

	// lost is set, under p.mu, once the blackhole has dropped bytes or a
	// FIN of this link. A stream with a hole cannot go on, so a lost link
	// forwards nothing more and is reset when the blackhole lifts.
	lost bool
}

func newLink(p *Proxy, client, target *net.TCPConn) *link {
	return &link{p: p, client: client, target: target, done: make(chan struct{})}
}

// start launches both directions. The caller must be counted in p.wg.
func (l *link) start() {
	up := newPipe(l, l.client, l.target, &l.p.stats.bytesToTarget)
	down := newPipe(l, l.target, l.client, &l.p.stats.bytesToClient)
	for _, pp := range []*pipe{up, down} {
		l.p.wg.Go(pp.readLoop)
		l.p.wg.Go(pp.writeLoop)
	}
}

// close closes both sockets, once. With abrupt, SO_LINGER 0 makes the
// kernel send RST instead of FIN, so each peer sees a reset.
func (l *link) close(abrupt bool) {
	l.closeOnce.Do(func() {
		close(l.done)
		if abrupt {
			_ = l.client.SetLinger(0)
			_ = l.target.SetLinger(0)
		}
		_ = l.client.Close()
		_ = l.target.Close()
		l.p.forget(l)
	})
}

// finishDirection records that one direction has forwarded its FIN.
func (l *link) finishDirection() {
	if l.halfClosed.Add(1) == 2 {
		l.close(false)
	}
}
