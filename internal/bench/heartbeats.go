package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/lease"
)

// HeartbeatConfig shapes a heartbeat benchmark: Runs runs held at once by
// one worker whose handlers wait, renewed under Mode for Window.
type HeartbeatConfig struct {
	Runs   int
	Mode   keeper.Mode
	Timing lease.Timing
	Window time.Duration // measured, after a warm-up of one T_renew
	// Commits, if set, reads the store's committed-transaction counter
	// (Postgres: pg_stat_database.xact_commit); nil for SQLite, where each
	// statement counted is its own transaction.
	Commits func(ctx context.Context) (int64, error)
	// StoreCPU, if set, reads the database server's CPU time.
	StoreCPU func() (time.Duration, error)
	// HeapProfile, if set, is a file the heap profile is written to once
	// every run is held.
	HeapProfile string
}

// HeartbeatResult is one measured mode.
type HeartbeatResult struct {
	Mode       keeper.Mode
	Window     time.Duration
	Statements int64 // renewal statements sent and answered
	Rows       int64 // leases renewed by them
	Commits    int64 // -1 when unknown
	StoreCPU   time.Duration
	ProcCPU    time.Duration // this process's CPU time
	Lost       uint64        // leases lost in the window (must be 0)
	Drains     uint64        // keeper drains answered by the store in the window
	// HeapPerRun and StackPerRun are the growth of the Go heap (live
	// bytes after a GC) and of goroutine stacks from before the worker
	// started to all runs held, divided by the runs held.
	HeapPerRun, StackPerRun float64
	HeldAtMeasure           int64 // handlers still blocked when the memory was read (= Runs)
}

// liveMemory is the live heap after a full GC, and the stack bytes in use.
func liveMemory() (heap, stack uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.StackInuse
}

// StatementsPerSecond is the renewal statement rate.
func (r HeartbeatResult) StatementsPerSecond() float64 {
	return float64(r.Statements) / r.Window.Seconds()
}

// RowsPerSecond is the renewed-lease rate.
func (r HeartbeatResult) RowsPerSecond() float64 { return float64(r.Rows) / r.Window.Seconds() }

// RowsPerStatement is the mean batch.
func (r HeartbeatResult) RowsPerStatement() float64 {
	if r.Statements == 0 {
		return 0
	}
	return float64(r.Rows) / float64(r.Statements)
}

// countingStore counts the renewal statements a worker sends.
type countingStore struct {
	scheduler.Store
	on         atomic.Bool
	statements atomic.Int64
	rows       atomic.Int64
}

func (s *countingStore) RunRenew(ctx context.Context, p *driver.RunRenewParams) (*driver.Run, error) {
	r, err := s.Store.RunRenew(ctx, p)
	if s.on.Load() && err == nil {
		s.statements.Add(1)
		s.rows.Add(1)
	}
	return r, err
}

func (s *countingStore) RunRenewMany(ctx context.Context, p *driver.RunRenewManyParams) (*driver.RunRenewManyResult, error) {
	r, err := s.Store.RunRenewMany(ctx, p)
	if s.on.Load() && err == nil {
		s.statements.Add(1)
		s.rows.Add(int64(len(r.Renewed)))
	}
	return r, err
}

// Heartbeats enqueues cfg.Runs runs, lets one worker claim them all with
// handlers that wait, and measures the renewal traffic of cfg.Mode over
// cfg.Window. The runs are completed before it returns.
func Heartbeats(ctx context.Context, store scheduler.Store, cfg HeartbeatConfig) (HeartbeatResult, error) {
	res := HeartbeatResult{Mode: cfg.Mode, Commits: -1}
	// A queue's concurrency is at most maxQueueConcurrency: more runs are
	// spread over several queues of one worker.
	const maxQueueConcurrency = 10000
	queues := map[string]int{}
	for i, left := 0, cfg.Runs; left > 0; i++ {
		n := min(left, maxQueueConcurrency)
		q := fmt.Sprintf("hb-%s-%d", cfg.Mode, i)
		if err := enqueueN(ctx, store, q, n); err != nil {
			return res, err
		}
		queues[q] = n
		left -= n
	}
	quiet := slog.New(slog.DiscardHandler)
	heap0, stack0 := liveMemory()
	cs := &countingStore{Store: store}
	events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: quiet})
	if err := events.Start(ctx); err != nil {
		return res, err
	}
	defer events.Stop(context.WithoutCancel(ctx))
	release := make(chan struct{})
	var holding, exited atomic.Int64
	all := make(chan struct{})
	var once sync.Once
	w, err := scheduler.NewWorker(cs, events, scheduler.WorkerConfig{Owner: "bench-" + cfg.Mode.String(),
		Queues: queues, Timing: cfg.Timing, Mode: cfg.Mode, Logger: quiet,
		FetchInterval: 5 * time.Millisecond})
	if err != nil {
		return res, err
	}
	hold := func(ctx context.Context, r *scheduler.Run) error {
		if holding.Add(1) == int64(cfg.Runs) {
			once.Do(func() { close(all) })
		}
		defer exited.Add(1)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for q := range queues {
		w.Handle(q, hold)
	}
	if err := w.Start(ctx); err != nil {
		return res, err
	}
	stop := func() error {
		close(release)
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return w.Stop(sctx)
	}
	select {
	case <-all:
	case <-time.After(2 * time.Minute):
		_ = stop()
		return res, fmt.Errorf("only %d of %d runs claimed within 2 minutes", holding.Load(), cfg.Runs)
	}
	heap1, stack1 := liveMemory()
	res.HeldAtMeasure = holding.Load() - exited.Load()
	if cfg.HeapProfile != "" {
		if err := writeHeapProfile(cfg.HeapProfile); err != nil {
			return res, errors.Join(err, stop())
		}
	}
	res.HeapPerRun = (float64(heap1) - float64(heap0)) / float64(cfg.Runs)
	res.StackPerRun = (float64(stack1) - float64(stack0)) / float64(cfg.Runs)
	time.Sleep(cfg.Timing.Renew) // warm-up: every run's renewal cycle has begun

	lost0, drains0 := w.Keeper().Stats().Lost, w.Keeper().Stats().Flushes
	var c0, c1 int64
	var s0, s1 time.Duration
	if cfg.Commits != nil {
		if c0, err = cfg.Commits(ctx); err != nil {
			return res, errors.Join(err, stop())
		}
	}
	if cfg.StoreCPU != nil {
		s0, _ = cfg.StoreCPU()
	}
	p0 := ProcessCPU()
	cs.on.Store(true)
	start := time.Now()
	time.Sleep(cfg.Window)
	cs.on.Store(false)
	res.Window = time.Since(start)
	res.ProcCPU = ProcessCPU() - p0
	if cfg.StoreCPU != nil {
		s1, _ = cfg.StoreCPU()
		res.StoreCPU = s1 - s0
	}
	if cfg.Commits != nil {
		if c1, err = cfg.Commits(ctx); err != nil {
			return res, errors.Join(err, stop())
		}
		res.Commits = c1 - c0
	}
	res.Statements, res.Rows = cs.statements.Load(), cs.rows.Load()
	res.Lost = w.Keeper().Stats().Lost - lost0
	res.Drains = w.Keeper().Stats().Flushes - drains0
	return res, stop()
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ProcessCPU is this process's user+system CPU time.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// GoroutinesCreated is how many goroutines this process has created so
// far (runtime/metrics): per op, it counts the hand-offs a path makes
// between goroutines, each a wake-up the CPU pays for.
func GoroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// PostgresCPU sums the user+system CPU time of every process named
// "postgres" on this machine (the server's backends, WAL writer,
// checkpointer…): the database's CPU, when it runs locally.
func PostgresCPU() (time.Duration, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	hz := int64(100) // USER_HZ: 100 on Linux
	var ticks int64
	found := false
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open || s[open+1:close] != "postgres" {
			continue
		}
		f := strings.Fields(s[close+1:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64) // utime: field 14 of stat
		k, _ := strconv.ParseInt(f[12], 10, 64) // stime: field 15
		ticks += u + k
		found = true
	}
	if !found {
		return 0, errors.New("no local postgres process")
	}
	return time.Duration(ticks * int64(time.Second) / hz), nil
}
