package faultproxy

import "sync/atomic"

// Stats counts what the proxy has done since New.
type Stats struct {
	Accepted      int64 // client connections accepted
	Open          int   // links forwarding now
	BytesToTarget int64 // bytes written to the target (client → target)
	BytesToClient int64 // bytes written to clients (target → client)
	BytesDropped  int64 // bytes dropped by the blackhole, both directions
}

type counters struct {
	accepted      atomic.Int64
	bytesToTarget atomic.Int64
	bytesToClient atomic.Int64
	bytesDropped  atomic.Int64
}

// Stats returns the counters. Each is read atomically, but not all at one
// instant.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	open := len(p.links)
	p.mu.Unlock()
	return Stats{
		Accepted:      p.stats.accepted.Load(),
		Open:          open,
		BytesToTarget: p.stats.bytesToTarget.Load(),
		BytesToClient: p.stats.bytesToClient.Load(),
		BytesDropped:  p.stats.bytesDropped.Load(),
	}
}
