package faultproxy

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync/atomic"
	"time"
)

const (
	// chunkSize is the most a reader takes in one read.
	chunkSize = 32 << 10
	// queueChunks bounds what waits in one direction to
	// queueChunks*chunkSize = 8 MiB; a full queue stops the reader, which
	// is the backpressure the sender feels.
	queueChunks = 256
	// slicesPerSecond sets the pacing grain under a bandwidth limit: a chunk
	// is written in slices of bandwidth/slicesPerSecond bytes (50 ms worth),
	// so a limit is smooth rather than one 32 KiB burst per long gap.
	slicesPerSecond = 20
)

// chunk is what a reader read at one time, or the end of the stream.
type chunk struct {
	data    []byte
	eof     bool
	release time.Time // earliest time the writer may send it
}

// pipe carries one direction of a link.
type pipe struct {
	l         *link
	src, dst  *net.TCPConn
	queue     chan chunk
	forwarded *atomic.Int64 // the proxy-wide byte counter for this direction

	lastRelease time.Time // reader only: keeps release times in order
	nextSend    time.Time // writer only: when the bandwidth limit lets the next slice go
}

func newPipe(l *link, src, dst *net.TCPConn, forwarded *atomic.Int64) *pipe {
	return &pipe{l: l, src: src, dst: dst, queue: make(chan chunk, queueChunks), forwarded: forwarded}
}

// readLoop reads src into stamped chunks until EOF, an error or the link
// closes.
func (pp *pipe) readLoop() {
	buf := make([]byte, chunkSize)
	for {
		n, err := pp.src.Read(buf)
		if n > 0 {
			if !pp.enqueue(chunk{data: bytes.Clone(buf[:n])}) {
				return
			}
		}
		if errors.Is(err, io.EOF) {
			pp.enqueue(chunk{eof: true})
			return
		}
		if err != nil {
			// Our own close (no-op: the link is closed already) or a reset
			// from the peer, which we pass on to the other side as a reset.
			pp.l.close(true)
			return
		}
	}
}

// enqueue stamps c and queues it, or drops it into the blackhole. It blocks
// while the queue is full and reports false once the link has closed.
func (pp *pipe) enqueue(c chunk) bool {
	p := pp.l.p
	p.mu.Lock()
	f := p.faults
	drop := f.blackhole || pp.l.lost
	if drop {
		pp.l.lost = true
	}
	p.mu.Unlock()
	if drop {
		p.stats.bytesDropped.Add(int64(len(c.data)))
		return true
	}

	c.release = time.Now().Add(f.latency)
	if f.jitter > 0 {
		c.release = c.release.Add(rand.N(f.jitter))
	}
	// Jitter must never reorder: no chunk is due before the one read ahead
	// of it. (The single writer keeps order anyway; the clamp keeps release
	// times honest so a later chunk does not jump its own jitter.)
	if c.release.Before(pp.lastRelease) {
		c.release = pp.lastRelease
	}
	pp.lastRelease = c.release

	select {
	case pp.queue <- c:
		return true
	case <-pp.l.done:
		return false
	}
}

// writeLoop sends queued chunks to dst in order, each when it is due.
func (pp *pipe) writeLoop() {
	for {
		var c chunk
		select {
		case c = <-pp.queue:
		case <-pp.l.done:
			return
		}
		if !pp.deliver(c) {
			return
		}
	}
}

// deliver writes one chunk, slice by slice under a bandwidth limit, and
// reports false once the link is closed.
func (pp *pipe) deliver(c chunk) bool {
	data := c.data
	for {
		bandwidth, verdict := pp.hold(c.release)
		switch verdict {
		case verdictClosed:
			return false
		case verdictDrop:
			pp.l.p.stats.bytesDropped.Add(int64(len(data)))
			return true
		}
		if c.eof {
			if err := pp.dst.CloseWrite(); err != nil {
				pp.l.close(true)
				return false
			}
			pp.l.finishDirection()
			return true
		}

		n := len(data)
		if bandwidth > 0 {
			n = min(n, max(1, bandwidth/slicesPerSecond))
		}
		start := time.Now()
		w, err := pp.dst.Write(data[:n])
		pp.forwarded.Add(int64(w))
		if err != nil {
			pp.l.close(true)
			return false
		}
		if bandwidth > 0 {
			pp.nextSend = start.Add(time.Duration(n) * time.Second / time.Duration(bandwidth))
		}
		data = data[n:]
		if len(data) == 0 {
			return true
		}
	}
}

type verdict int

const (
	verdictSend verdict = iota
	verdictDrop
	verdictClosed
)

// hold waits until a chunk due at release may go: past its release time,
// past the end of any stall and, under a bandwidth limit, past nextSend.
// Faults are re-read whenever they change, so a stall that starts while a
// chunk waits holds it too and Stall(0) lets it go. Once the chunk may go,
// the blackhole decides whether it is sent or dropped; that decision and
// the lost mark are taken under p.mu, which SetBlackhole(false) relies on.
func (pp *pipe) hold(release time.Time) (bandwidth int, v verdict) {
	p := pp.l.p
	for {
		p.mu.Lock()
		f := p.faults
		changed := p.changed
		until := release
		if f.stallUntil.After(until) {
			until = f.stallUntil
		}
		if f.bandwidth > 0 && pp.nextSend.After(until) {
			until = pp.nextSend
		}
		wait := time.Until(until)
		if wait <= 0 {
			if f.blackhole || pp.l.lost {
				pp.l.lost = true
				p.mu.Unlock()
				return 0, verdictDrop
			}
			p.mu.Unlock()
			return f.bandwidth, verdictSend
		}
		p.mu.Unlock()

		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-changed:
		case <-pp.l.done:
			timer.Stop()
			return 0, verdictClosed
		}
		timer.Stop()
	}
}
