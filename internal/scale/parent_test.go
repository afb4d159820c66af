package scale

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/internal/witness"
	"github.com/leasehold/leasehold/runs"
)

const patience = 90 * time.Second

// fleet is the parent's side: the store, the witness, the processes and
// the acknowledgements they reported.
type fleet struct {
	t      *testing.T
	url    string
	schema string
	store  *postgres.Driver
	db     *pgxpool.Pool // direct reads of the tables, for counts
	wit    *witness.Witness
	srv    *httptest.Server
	cfg    procConfig // the template of every process's config
	ids    []int64

	mu        sync.Mutex
	started   map[string]bool
	events    []eventAck
	appends   []appendAck
	uncertain map[string]int
	procs     map[string]*proc
}

// proc is one running process.
type proc struct {
	owner string
	cmd   *exec.Cmd
	stdin interface{ Close() error }
	out   *strings.Builder
	done  chan struct{}
	err   error
}

func newFleet(t *testing.T, effects, slots, appenders int) *fleet {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	url, schema := testdb.Schema(t)
	store, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: schema, Logger: slog.New(slog.DiscardHandler),
		CriticalConns: 2, GeneralConns: 2})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	_, err = store.Migrate(ctx)
	require.NoError(t, err)
	pc, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	pc.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	pc.MaxConns = 2
	db, err := pgxpool.NewWithConfig(ctx, pc)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	f := &fleet{t: t, url: url, schema: schema, store: store, db: db, wit: witness.New(), started: map[string]bool{},
		uncertain: map[string]int{}, procs: map[string]*proc{}}
	mux := http.NewServeMux()
	mux.Handle("/", f.wit.Handler())
	mux.HandleFunc("POST /started", report(f, func(r keyReport) { f.started[r.Key] = true }))
	mux.HandleFunc("POST /ack/event", report(f, func(r eventAck) { f.events = append(f.events, r) }))
	mux.HandleFunc("POST /ack/append", report(f, func(r appendAck) { f.appends = append(f.appends, r) }))
	mux.HandleFunc("POST /uncertain", report(f, func(r keyReport) { f.uncertain[r.Key]++ }))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	f.cfg = procConfig{URL: url, Schema: schema, ObserverURL: f.srv.URL, Slots: slots, Effects: effects,
		Appenders: appenders, Life: 3 * time.Minute}
	return f
}

// report decodes a report strictly and records it under the fleet's lock.
func report[T any](f *fleet, record func(T)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var v T
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		record(v)
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}
}

// enqueue adds n runs.
func (f *fleet) enqueue(n int) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	for n > 0 {
		batch := min(n, 500)
		es := make([]runs.Enqueue, batch)
		for i := range es {
			es[i] = runs.Enqueue{Queue: queue, Payload: []byte(`{}`), MaxAttempts: 100}
		}
		enq, err := f.store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
		require.NoError(f.t, err)
		for _, e := range enq {
			f.ids = append(f.ids, e.Run.ID)
		}
		n -= batch
	}
}

// start starts a process named owner and waits until it runs.
func (f *fleet) start(owner string) *proc {
	t := f.t
	t.Helper()
	cfg := f.cfg
	cfg.Owner = owner
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), procEnv+"="+string(raw))
	p := &proc{owner: owner, cmd: cmd, out: &strings.Builder{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &lockedWriter{w: p.out}, &lockedWriter{w: p.out}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	p.stdin = stdin
	require.NoError(t, cmd.Start())
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	f.mu.Lock()
	f.procs[owner] = p
	f.mu.Unlock()
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		select {
		case <-p.done:
			return true
		default:
		}
		return f.started[owner]
	}, patience, 10*time.Millisecond)
	select {
	case <-p.done:
		t.Fatalf("process %s exited at start: %v\n%s", owner, p.err, p.out.String())
	default:
	}
	return p
}

// stop stops a process gracefully: SIGTERM, or closing its stdin, and
// waits for a clean exit.
func (f *fleet) stop(p *proc, sigterm bool) {
	f.t.Helper()
	if sigterm {
		require.NoError(f.t, p.cmd.Process.Signal(syscall.SIGTERM))
	} else {
		_ = p.stdin.Close()
	}
	select {
	case <-p.done:
	case <-time.After(patience):
		f.t.Fatalf("process %s did not stop", p.owner)
	}
	require.NoError(f.t, p.err, "process %s did not stop cleanly:\n%s", p.owner, p.out.String())
}

// kill SIGKILLs a process.
func (f *fleet) kill(p *proc) {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// progress counts the completed runs and the final ones, reading the
// table directly: one query, not a page through every run.
func (f *fleet) progress(ctx context.Context) (completed, final int, err error) {
	err = f.db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'completed'),
	    count(*) FILTER (WHERE state IN ('completed', 'failed', 'cancelled')) FROM runs`).Scan(&completed, &final)
	return completed, final, err
}

// counts returns the acknowledged events and appends so far.
func (f *fleet) counts() (events, appends int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.events), len(f.appends)
}

type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w.Len() > 64<<10 {
		return len(b), nil
	}
	return l.w.Write(b)
}
