package faultproxy

import "time"

// faults is the proxy-wide fault setting, guarded by Proxy.mu.
type faults struct {
	latency    time.Duration
	jitter     time.Duration
	stallUntil time.Time // zero or past: no stall
	blackhole  bool
	bandwidth  int // bytes per second per direction per link; 0 = unlimited
}

// update applies f to the faults and wakes every held writer so it
// recomputes its release against the new setting.
func (p *Proxy) update(f func(*faults)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(&p.faults)
	p.broadcastLocked()
}

func (p *Proxy) broadcastLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// SetLatency delays every chunk, in both directions, by d plus a uniform
// random extra in [0, jitter). Chunks of one direction still arrive in the
// order they were sent: jitter can bunch them up but never reorder them.
// Negative values count as 0. It applies to chunks read from now on.
func (p *Proxy) SetLatency(d, jitter time.Duration) {
	p.update(func(f *faults) {
		f.latency = max(d, 0)
		f.jitter = max(jitter, 0)
	})
}

// Stall holds all traffic, both directions on every connection, until d
// from now; the held data is then delivered in order. It replaces any stall
// in progress, so Stall(0) ends a stall at once.
func (p *Proxy) Stall(d time.Duration) {
	p.update(func(f *faults) {
		if d <= 0 {
			f.stallUntil = time.Time{}
			return
		}
		f.stallUntil = time.Now().Add(d)
	})
}

// SetBandwidth limits each direction of each connection to bytesPerSec.
// 0 (or less) means unlimited.
func (p *Proxy) SetBandwidth(bytesPerSec int) {
	p.update(func(f *faults) { f.bandwidth = max(bytesPerSec, 0) })
}

// SetBlackhole turns the blackhole on or off. While on, bytes read in either
// direction are dropped silently and nothing is forwarded; connections are
// still accepted and stay open. Turning it off resets (RST) every
// connection that lost anything, because a TCP stream that silently dropped
// bytes cannot continue; connections that lost nothing carry on.
func (p *Proxy) SetBlackhole(on bool) {
	p.mu.Lock()
	p.faults.blackhole = on
	p.broadcastLocked()
	var lost []*link
	if !on {
		// link.lost is only set under p.mu, so every link that dropped
		// data while the blackhole was on is seen here.
		for l := range p.links {
			if l.lost {
				lost = append(lost, l)
			}
		}
	}
	p.mu.Unlock()
	for _, l := range lost {
		l.close(true)
	}
}

// ResetAll closes every current connection abruptly: both the client and
// the target see a reset (ECONNRESET), not a clean EOF. New connections are
// accepted as before.
func (p *Proxy) ResetAll() {
	p.mu.Lock()
	links := p.linksLocked()
	p.mu.Unlock()
	for _, l := range links {
		l.close(true)
	}
}
