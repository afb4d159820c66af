package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/lease"
)

// Router submits commands to whichever of its hosts holds a world, the
// way a client of several hosts in one process would: it follows the
// holder a *NotHolderError names (or the store's head), waits out an
// overloaded inbox, and retries an unknown outcome with the same key —
// which the key rule makes safe. The server (`leasehold serve`) does the
// same for remote submitters.
type Router struct {
	store HeadReader
	rt    rt.Runtime

	mu    sync.Mutex
	hosts map[string]Peer
	where map[string]string // world → the node last seen holding it
}

// HeadReader reads a world's head: all a Router needs of the store.
type HeadReader interface {
	WorldGet(ctx context.Context, p *driver.WorldGetParams) (*driver.World, error)
}

// NewRouter returns a Router over the hosts (in this process or remote),
// reading heads from s.
func NewRouter(s HeadReader, hosts ...Peer) *Router {
	r := &Router{store: s, rt: rt.Real(clock.Real()), hosts: map[string]Peer{}, where: map[string]string{}}
	for _, h := range hosts {
		r.hosts[h.Node()] = h
	}
	return r
}

// Add adds a host to the router (a host whose Band's Mover is this router
// is built before the router knows it).
func (r *Router) Add(p Peer) {
	r.mu.Lock()
	r.hosts[p.Node()] = p
	r.mu.Unlock()
}

// maxRouteAttempts bounds one Submit's retries: each is a hop to another
// holder, a wait for an inbox or a retry after an unknown outcome.
const maxRouteAttempts = 1000

// Submit submits cmd to the world's holder among the router's hosts and
// returns its reply; see Host.Submit for the errors. It gives up with the
// last retryable error after maxRouteAttempts or when ctx ends.
func (r *Router) Submit(ctx context.Context, w string, cmd Command) (Reply, error) {
	var last error
	backoff := time.Millisecond
	for range maxRouteAttempts {
		h, err := r.route(ctx, w)
		if err != nil {
			var nh *NotHolderError
			if !errors.As(err, &nh) || nh.Holder != "" || ctx.Err() != nil {
				return Reply{}, err
			}
			last = err // nobody holds the world this instant (between a revoke and a grant)
			if !rt.Sleep(r.rt, ctx, backoff) {
				return Reply{}, last
			}
			backoff = min(backoff*2, 100*time.Millisecond)
			continue
		}
		rep, err := h.Submit(ctx, w, cmd)
		if err == nil {
			return rep, nil
		}
		last = err
		if ctx.Err() != nil || !retryable(err) {
			return Reply{}, err
		}
		var nh *NotHolderError
		var ov *OverloadedError
		switch {
		case errors.As(err, &nh) && nh.Holder != "" && nh.Holder != h.Node():
			r.setWhere(w, nh.Holder) // hop at once
			continue
		case errors.As(err, &ov):
			if !rt.Sleep(r.rt, ctx, ov.RetryAfter) {
				return Reply{}, err
			}
			continue
		case errors.Is(err, lease.ErrNotHolder), errors.Is(err, lease.ErrClosed), errors.Is(err, lease.ErrUnavailable):
			// Read the head next time: the holder may have moved, or died
			// and been swept (a dead remote answers nothing but unavailable
			// until the sweep grants the world elsewhere).
			r.setWhere(w, "")
		}
		if !rt.Sleep(r.rt, ctx, backoff) {
			return Reply{}, last
		}
		backoff = min(backoff*2, 100*time.Millisecond)
	}
	return Reply{}, fmt.Errorf("world %s: gave up after %d attempts: %w", w, maxRouteAttempts, last)
}

// handoffPrepares is how many times a planned handoff's receiver replays
// before the handoff (Router.Handoff).
const handoffPrepares = 3

// Handoff hands w from one of the router's hosts to another: the receiver
// looks at the world and warms its mirror first (Host.Prepare: its first
// look must come before the handoff lands, see Host.Acquire), the sender
// hands off, and the receiver acquires at once (rather than on its next
// submission), replaying only the tail.
func (r *Router) Handoff(ctx context.Context, w, from, to string) error {
	r.mu.Lock()
	hf, ht := r.hosts[from], r.hosts[to]
	r.mu.Unlock()
	if hf == nil || ht == nil {
		return fmt.Errorf("world %s: handoff %s → %s: both must be hosts of this router: %w", w, from, to, lease.ErrInvalid)
	}
	// The receiver replays while the sender keeps serving; each replay
	// takes about as long as the entries it reads took to append, so the
	// second and third are short, and the tail left for the acquire —
	// replayed while commands wait — is a few milliseconds of turns.
	for range handoffPrepares {
		if err := ht.Prepare(ctx, w); err != nil {
			return err
		}
	}
	if err := hf.Handoff(ctx, w, to); err != nil {
		return err
	}
	r.setWhere(w, to)
	return ht.Acquire(ctx, w)
}

// PrepareOn has the router's host node Prepare w (Mover).
func (r *Router) PrepareOn(ctx context.Context, w, node string) error {
	p, err := r.peer(w, node)
	if err != nil {
		return err
	}
	return p.Prepare(ctx, w)
}

// AcquireOn has the router's host node Acquire w (Mover).
func (r *Router) AcquireOn(ctx context.Context, w, node string) error {
	p, err := r.peer(w, node)
	if err != nil {
		return err
	}
	r.setWhere(w, node)
	return p.Acquire(ctx, w)
}

func (r *Router) peer(w, node string) (Peer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.hosts[node]
	if p == nil {
		return nil, fmt.Errorf("world %s: %s is not a host of this router: %w", w, node, lease.ErrInvalid)
	}
	return p, nil
}

func (r *Router) setWhere(w, node string) {
	r.mu.Lock()
	r.where[w] = node
	r.mu.Unlock()
}

// route finds the host to submit to: the node last seen holding w, or the
// holder the store's head names.
func (r *Router) route(ctx context.Context, w string) (Peer, error) {
	r.mu.Lock()
	node := r.where[w]
	r.mu.Unlock()
	if node == "" {
		head, err := r.store.WorldGet(ctx, &driver.WorldGetParams{World: w})
		if err != nil {
			return nil, err
		}
		node = head.State.Holder
		if node == "" {
			return nil, &NotHolderError{World: w, Epoch: head.State.Epoch}
		}
		r.setWhere(w, node)
	}
	r.mu.Lock()
	h := r.hosts[node]
	r.mu.Unlock()
	if h == nil {
		r.setWhere(w, "")
		return nil, &NotHolderError{World: w, Holder: node}
	}
	return h, nil
}
