package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/remote"
	"github.com/leasehold/leasehold/server"
)

// APIConfig shapes `leasehold bench api`: Runs enqueued through the API in
// batches of EnqueueBatch, then worked by Workers remote workers over
// loopback HTTP, each claiming up to ClaimBatch runs per call and
// completing them with one complete-many call.
type APIConfig struct {
	Runs         int
	Workers      int
	ClaimBatch   int
	EnqueueBatch int
	Queue        string
	// Renewals is how many times each worker renews every run it holds
	// (one POST …/renew per run each time) between its claim and its
	// complete-many: heartbeats through the API, which the server's keeper
	// coalesces.
	Renewals int
}

// APIResult is what the API benchmark measured.
type APIResult struct {
	Runs             int
	Enqueue, Work    time.Duration              // wall time of the two phases
	Latency          map[string][]time.Duration // per endpoint, sorted
	Claims, Complete int                        // calls made
	Fenced           int                        // completions refused (must be 0)
	Renews           int                        // renew calls answered
	// HeartbeatStatements are the renewal statements the server made in
	// the work phase: synchronous RunRenew calls plus keeper drains
	// (RunRenewMany), counted at the driver.
	HeartbeatStatements int64
}

// EnqueuePerSecond and WorkPerSecond are the phases' run rates; the end to
// end rate (claimed and completed through the API) is WorkPerSecond.
func (r APIResult) EnqueuePerSecond() float64 { return float64(r.Runs) / r.Enqueue.Seconds() }

// WorkPerSecond is runs claimed and completed through the API per second.
func (r APIResult) WorkPerSecond() float64 { return float64(r.Runs) / r.Work.Seconds() }

// Quantile returns the q-quantile of an endpoint's latencies.
func (r APIResult) Quantile(endpoint string, q float64) time.Duration {
	l := r.Latency[endpoint]
	if len(l) == 0 {
		return 0
	}
	return l[min(int(q*float64(len(l))), len(l)-1)]
}

// countRenewals counts a driver's renewal statements.
type countRenewals struct {
	driver.Driver
	n atomic.Int64
}

func (d *countRenewals) RunRenew(ctx context.Context, p *driver.RunRenewParams) (*driver.Run, error) {
	d.n.Add(1)
	return d.Driver.RunRenew(ctx, p)
}

func (d *countRenewals) RunRenewMany(ctx context.Context, p *driver.RunRenewManyParams) (*driver.RunRenewManyResult, error) {
	d.n.Add(1)
	return d.Driver.RunRenewMany(ctx, p)
}

// API runs the benchmark against a server over a client of d, served on a
// loopback listener of its own (real HTTP over TCP), and stops both; d is
// closed with the client.
func API(ctx context.Context, d driver.Driver, cfg APIConfig) (APIResult, error) {
	if cfg.Queue == "" {
		cfg.Queue = "bench-api"
	}
	counted := &countRenewals{Driver: d}
	c, err := leasehold.NewClient(ctx, counted, leasehold.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return APIResult{}, err
	}
	defer c.Close()
	s, err := server.New(c, server.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return APIResult{}, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return APIResult{}, err
	}
	hs := &http.Server{Handler: s.Handler()}
	go func() { _ = hs.Serve(ln) }()
	defer func() {
		_ = hs.Shutdown(context.Background())
		_ = s.Close(context.Background())
	}()
	token, _, err := c.CreateToken(ctx, "bench api", []string{"admin"})
	if err != nil {
		return APIResult{}, err
	}
	rc := remote.New("http://"+ln.Addr().String(), remote.WithToken(token))
	defer rc.CloseIdleConnections()

	res := APIResult{Runs: cfg.Runs, Latency: map[string][]time.Duration{}}
	var mu sync.Mutex
	record := func(endpoint string, d time.Duration) {
		mu.Lock()
		res.Latency[endpoint] = append(res.Latency[endpoint], d)
		mu.Unlock()
	}

	// Enqueue, with Workers concurrent callers.
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, cfg.Workers)
	for range cfg.Workers {
		wg.Go(func() {
			for {
				from := int(next.Add(int64(cfg.EnqueueBatch))) - cfg.EnqueueBatch
				if from >= cfg.Runs {
					return
				}
				batch := make([]remote.Enqueue, min(cfg.EnqueueBatch, cfg.Runs-from))
				for i := range batch {
					batch[i] = remote.Enqueue{Queue: cfg.Queue}
				}
				t := time.Now()
				if _, err := rc.Enqueue(ctx, batch...); err != nil {
					errs <- fmt.Errorf("enqueue: %w", err)
					return
				}
				record("POST /v1/runs", time.Since(t))
			}
		})
	}
	wg.Wait()
	res.Enqueue = time.Since(start)
	select {
	case err := <-errs:
		return res, err
	default:
	}

	// Work: each remote worker claims a batch and completes it in one call.
	var done, claims, completes, fenced, renews atomic.Int64
	counted.n.Store(0)
	start = time.Now()
	for w := range cfg.Workers {
		owner := fmt.Sprintf("bench-%d", w)
		wg.Go(func() {
			for done.Load() < int64(cfg.Runs) {
				t := time.Now()
				ls, err := rc.Claim(ctx, cfg.Queue, owner, cfg.ClaimBatch, 0)
				if err != nil {
					errs <- fmt.Errorf("claim: %w", err)
					return
				}
				record("POST /v1/runs/claim", time.Since(t))
				claims.Add(1)
				if len(ls) == 0 {
					return // every run left is held by another worker, which completes it
				}
				for range cfg.Renewals {
					for _, l := range ls {
						t := time.Now()
						if _, err := rc.Renew(ctx, l.ID, l.Fence, owner); err != nil {
							errs <- fmt.Errorf("renew: %w", err)
							return
						}
						record("POST /v1/runs/{id}/renew", time.Since(t))
						renews.Add(1)
					}
				}
				cs := make([]remote.Completion, len(ls))
				for i, l := range ls {
					cs[i] = remote.Completion{ID: l.ID, Fence: l.Fence}
				}
				t = time.Now()
				ok, f, err := rc.CompleteMany(ctx, cs)
				if err != nil {
					errs <- fmt.Errorf("complete-many: %w", err)
					return
				}
				record("POST /v1/runs/complete", time.Since(t))
				completes.Add(1)
				fenced.Add(int64(len(f)))
				done.Add(int64(len(ok)))
			}
		})
	}
	wg.Wait()
	res.Work = time.Since(start)
	res.Claims, res.Complete, res.Fenced = int(claims.Load()), int(completes.Load()), int(fenced.Load())
	res.Renews, res.HeartbeatStatements = int(renews.Load()), counted.n.Load()
	for _, l := range res.Latency {
		slices.Sort(l)
	}
	select {
	case err := <-errs:
		return res, err
	default:
	}
	if res.Fenced > 0 {
		return res, errors.New("bench api: completions were refused for their fence: a run was claimed twice")
	}
	return res, nil
}
