package worldfault

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/internal/faultproxy"
	"github.com/leasehold/leasehold/internal/servetest"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
)

// patience bounds every wait: generous, so a loaded machine makes a
// scenario slower, not red.
const patience = 60 * time.Second

// scenario is the parent's side: the store, the sweep, the host
// processes, the router and the submitters' record.
type scenario struct {
	t      *testing.T
	url    string // direct
	schema string
	addr   string // the proxies' target
	store  *postgres.Driver
	procs  map[string]*hostProc
	router *host.Router

	mu       sync.Mutex
	acks     []ackRecord
	errs     []error
	stop     atomic.Bool
	wg       sync.WaitGroup
	acked    atomic.Int64
	notify   chan struct{} // a tick per acknowledgement, for waits
	peerLogs []*peerLog    // what the router's submissions met, per host
	wit      *witness      // the payouts' downstream system
}

type ackRecord struct {
	key    string
	at     time.Time
	pos    int64
	dup    bool
	payout bool
}

func newScenario(t *testing.T) *scenario {
	t.Helper()
	// The leasehold binary that ends each walkthrough (cliAudit) is built
	// before any scenario starts: on a cold build cache the build takes
	// both cores for a minute or more, and beside a running scenario it
	// starved the hosts of the scenarios still under way.
	servetest.Binary(t)
	dsn, schema := testdb.Schema(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "5432")
	}
	ctx := context.Background()
	store, err := postgres.Open(ctx, postgres.Config{URL: dsn, Schema: schema, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	_, err = store.Migrate(ctx)
	require.NoError(t, err)
	s := &scenario{t: t, url: dsn, schema: schema, addr: addr, store: store, procs: map[string]*hostProc{},
		notify: make(chan struct{}, 1), wit: startWitness(t)}
	sw := world.NewSweeper(store, clock.Real(), timing, slog.New(slog.DiscardHandler))
	require.NoError(t, sw.Start(ctx))
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = sw.Stop(sctx)
	})
	return s
}

// hostProc is a running host process and its fault proxy.
type hostProc struct {
	node   string
	proxy  *faultproxy.Proxy
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *tail
	remote *host.Remote
	base   string
	done   chan struct{}
}

// startHost starts a host process for node behind a fault proxy of its own
// and waits for its address. It is killed when the test ends.
func (s *scenario) startHost(node string) *hostProc {
	t := s.t
	t.Helper()
	proxy, err := faultproxy.New(s.addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	u, err := url.Parse(s.url)
	require.NoError(t, err)
	u.Host = proxy.Addr()
	raw, err := json.Marshal(hostConfig{Node: node, PostgresURL: u.String(), Schema: s.schema, Timing: timing, Life: 3 * time.Minute,
		EffectsURL: s.wit.url})
	require.NoError(t, err)
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), hostEnv+"="+string(raw))
	p := &hostProc{node: node, proxy: proxy, cmd: cmd, out: &tail{max: 64 << 10}, done: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = p.out
	p.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if a, ok := strings.CutPrefix(line, "listening on "); ok {
				addr <- a
			}
			p.out.Write([]byte(line + "\n"))
		}
	}()
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("host %s output (tail):\n%s", node, p.out.String())
		}
	})
	select {
	case p.base = <-addr:
	case <-p.done:
		t.Fatalf("host %s exited before listening:\n%s", node, p.out.String())
	case <-time.After(patience):
		t.Fatalf("host %s did not listen within %s", node, patience)
	}
	p.remote = host.NewRemote(node, p.base, &http.Client{Timeout: 5 * time.Second})
	s.procs[node] = p
	return p
}

// kill SIGKILLs the process and waits for it.
func (p *hostProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// status reads the host's /v1/status.
func (p *hostProc) status(t *testing.T) (held []string, stats host.Stats) {
	resp, err := http.Get(p.base + "/v1/status")
	require.NoError(t, err)
	defer resp.Body.Close()
	var st struct {
		Held  []string
		Stats host.Stats
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	return st.Held, st.Stats
}

// route builds the router over every host started so far.
func (s *scenario) route() *host.Router {
	var peers []host.Peer
	s.peerLogs = s.peerLogs[:0]
	for _, p := range s.procs {
		l := &peerLog{Peer: p.remote}
		s.peerLogs = append(s.peerLogs, l)
		peers = append(peers, l)
	}
	s.router = host.NewRouter(s.store, peers...)
	return s.router
}

// submit starts n submitters sending deposits of 1 with their own keys
// to world w until stopSubmitters; every fifth command is a payout of 1,
// whose side effect the witness records.
func (s *scenario) submit(w string, n int) {
	for i := range n {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*patience)
			defer cancel()
			for k := 0; !s.stop.Load(); k++ {
				key := fmt.Sprintf("sub%d-%d", i, k)
				cmd := host.Command{Key: key, Payload: json.RawMessage(fmt.Sprintf(`{"op":"deposit","account":"a%d","amount":1}`, i))}
				if k%5 == 4 {
					cmd.Payload = json.RawMessage(fmt.Sprintf(`{"op":"payout","account":"a%d","amount":1,"to":"out"}`, i))
				}
				rep, err := s.router.Submit(ctx, w, cmd)
				s.mu.Lock()
				if err != nil {
					s.errs = append(s.errs, fmt.Errorf("%s: %w", key, err))
					s.mu.Unlock()
					return
				}
				s.acks = append(s.acks, ackRecord{key: key, at: time.Now(), pos: rep.Position, dup: rep.Duplicate, payout: k%5 == 4})
				s.mu.Unlock()
				s.acked.Add(1)
				select {
				case s.notify <- struct{}{}:
				default:
				}
			}
		}()
	}
}

// awaitAcked waits until at least n commands were acknowledged in all.
func (s *scenario) awaitAcked(n int64) {
	s.t.Helper()
	deadline := time.After(patience)
	for s.acked.Load() < n {
		select {
		case <-s.notify:
		case <-deadline:
			s.explainSlow()
			s.mu.Lock()
			defer s.mu.Unlock()
			s.t.Fatalf("only %d of %d acknowledged within %s (errors: %v)", s.acked.Load(), n, patience, s.errs)
		}
	}
}

func (s *scenario) stopSubmitters() {
	s.stop.Store(true)
	s.wg.Wait()
	require.Empty(s.t, s.errs, "every submission was acknowledged in the end")
}

// checkJournal reads the whole journal, audits it, and checks every
// acknowledged key is journaled exactly once (and nothing else is).
func (s *scenario) checkJournal(w string) []journal.Entry {
	t := s.t
	t.Helper()
	var es []journal.Entry
	for from := int64(1); ; {
		page, err := s.store.JournalRead(context.Background(), &driver.JournalReadParams{World: w, From: from, Limit: 10_000})
		require.NoError(t, err)
		es = append(es, page...)
		if len(page) < 10_000 {
			break
		}
		from = page[len(page)-1].Position + 1
	}
	rep := journal.Audit(es)
	require.True(t, rep.OK(), "audit: %v", rep.Violation)
	count := map[string]int{}
	at := map[string]int64{}
	var st journal.State
	signed := 0
	for i := range es {
		e := &es[i]
		if e.Kind == host.TurnKind {
			count[e.Key]++
			at[e.Key] = e.Position
			// The audit verified every signature; that there are some to
			// verify is this: each turn's epoch was granted with the
			// host's registered key, so its batch had to be signed.
			require.NotNil(t, st.HolderKey, "turn at %d under epoch %d, whose grant carries no key", e.Position, e.Epoch)
		}
		if len(e.Signature) > 0 {
			signed++
		}
		var err error
		st, err = journal.Fold(st, e)
		require.NoError(t, err)
	}
	for k, n := range count {
		require.Equal(t, 1, n, "key %s journaled %d times", k, n)
	}
	// The witness, outside the ledger: each payout's effect was invoked
	// once at most, and every acknowledged payout's exactly once.
	calls := s.wit.snapshot()
	for k, n := range calls {
		require.Equal(t, 1, n, "payout %s invoked %d times", k, n)
	}
	resolved, payouts := 0, 0
	for _, e := range es {
		if e.Kind == host.EffectResolvedKind {
			resolved++
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.acks {
		require.Equal(t, 1, count[a.key], "acknowledged key %s is in the journal once", a.key)
		require.Equal(t, at[a.key], a.pos, "acknowledged key %s at the position it was answered with", a.key)
		if a.payout {
			payouts++
			require.Equal(t, 1, calls[a.key], "acknowledged payout %s invoked once", a.key)
		}
	}
	ok := cliAudit(t, es, rep, signed)
	t.Logf("journal: %d entries, %d turns in %d signed batches (every signature valid), %d acknowledged; witness: %d payouts acknowledged, %d effects invoked, each once, %d settled by reconciliation; spans: %s; leasehold audit --file: %s",
		len(es), len(count), signed, len(s.acks), payouts, len(calls), resolved, spans(rep), ok)
	return es
}

func spans(r journal.Report) string {
	var b strings.Builder
	for _, sp := range r.Spans {
		fmt.Fprintf(&b, "[%d..%d epoch %d %q] ", sp.From, sp.To, sp.Epoch, sp.Holder)
	}
	return b.String()
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
