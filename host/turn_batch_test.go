package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/journal"
)

// gatedStore is the real store with a gate on its journal appends: an
// armed gate holds the next append until the test releases it, and can
// fail it without writing (what a lost connection looks like to the
// host: the outcome unknown). It lets a test hold one batch in the air
// while the host decides the next.
type gatedStore struct {
	driver.Driver
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	release chan error // nil: let the append through; an error: fail it unwritten
}

func (g *gatedStore) arm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.entered, g.release = true, make(chan struct{}), make(chan error, 1)
}

func (g *gatedStore) JournalAppend(ctx context.Context, p *driver.JournalAppendParams) ([]journal.AppendOutcome, error) {
	g.mu.Lock()
	armed := g.armed
	g.armed = false
	entered, release := g.entered, g.release
	g.mu.Unlock()
	if armed {
		close(entered)
		if err := <-release; err != nil {
			return nil, err
		}
	}
	return g.Driver.JournalAppend(ctx, p)
}

// watched is the bank with a tap on Decide: each decided command's key
// is sent on the channel (the test's proof of when a command was
// decided), and the decision of the key hold names waits for the test to
// close resume.
type watched struct {
	programs.Bank
	decided chan string
	hold    string
	resume  chan struct{}
}

func (w watched) New() host.State { return watchedState{w.Bank.New(), w} }

type watchedState struct {
	host.State
	w watched
}

func (s watchedState) Decide(cmd host.Command) (host.Decision, error) {
	d, err := s.State.Decide(cmd)
	s.w.decided <- cmd.Key
	if cmd.Key == s.w.hold {
		<-s.w.resume
	}
	return d, err
}

// next receives from ch; the guard only turns a hang into a failure.
func next[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatal("nothing came within 30 s")
		panic("unreachable")
	}
}

// waitQueued waits until n commands wait in w's inbox (bounded: the
// submissions are already on their way).
func waitQueued(t *testing.T, h *host.Host, w string, n int) {
	for i := 0; host.InboxLen(h, w) < n; i++ {
		require.Less(t, i, 1_000_000, "the submissions never reached the inbox")
		runtime.Gosched()
	}
}

type submitted struct {
	r   host.Reply
	err error
}

func submitAsync(h *host.Host, w string, c host.Command) <-chan submitted {
	ch := make(chan submitted, 1)
	go func() {
		r, err := h.Submit(context.Background(), w, c)
		ch <- submitted{r, err}
	}()
	return ch
}

// TestABatchDecidedWhileAnotherFliesIsSentOnlyAfterItLanded: the host
// decides the next batch while the last one's append is in the air. When
// that append lands, the next is answered and journaled after it; when it
// fails, the next batch's decisions (made on a state that included the
// failed batch) are thrown away and decided again on the journal's state.
// A retry of a flying command joins it.
func TestABatchDecidedWhileAnotherFliesIsSentOnlyAfterItLanded(t *testing.T) {
	withdraw := host.Command{Key: "w1", Payload: json.RawMessage(`{"op":"withdraw","account":"bob","amount":100}`)}
	for _, fail := range []bool{false, true} {
		name := "lands"
		if fail {
			name = "fails"
		}
		t.Run(name, func(t *testing.T) {
			forEachDriver(t, func(t *testing.T, d driver.Driver) {
				ctx := context.Background()
				g := &gatedStore{Driver: d}
				prog := watched{decided: make(chan string, 16), hold: "dep-bob-100", resume: make(chan struct{})}
				h := newHost(t, g, "home-1", prog, func(c *host.Config) { c.MaxBatch = 2 })
				require.NoError(t, h.Create(ctx, "acct"))

				// The deposit is decided alone; while its decision waits,
				// the withdrawal and a retry of the deposit queue up, so
				// they are the next batch, taken while the deposit flies.
				g.arm()
				dep := submitAsync(h, "acct", deposit("bob", 100))
				require.Equal(t, "dep-bob-100", next(t, prog.decided))
				wd := submitAsync(h, "acct", withdraw)
				waitQueued(t, h, "acct", 1)
				again := submitAsync(h, "acct", deposit("bob", 100))
				waitQueued(t, h, "acct", 2)
				close(prog.resume)
				next(t, g.entered)                            // the deposit's append is in the air
				require.Equal(t, "w1", next(t, prog.decided)) // decided while it flies: the funds seen

				if !fail {
					g.release <- nil
					r := next(t, dep)
					require.NoError(t, r.err)
					w := next(t, wd)
					require.NoError(t, w.err)
					require.JSONEq(t, `{"ok":true,"balance":0}`, string(w.r.Payload))
					require.Greater(t, w.r.Position, r.r.Position)
					a := next(t, again)
					require.NoError(t, a.err)
					require.Equal(t, r.r.Position, a.r.Position, "the retry joins the flying turn")
					n := turnKeys(journalOf(t, d, "acct"))
					require.Equal(t, 1, n["dep-bob-100"])
					require.Equal(t, 1, n["w1"])
					return
				}
				g.release <- errors.New("connection lost mid-append")
				r := next(t, dep)
				var unknown *host.UnknownOutcomeError
				require.ErrorAs(t, r.err, &unknown)
				require.ErrorAs(t, next(t, again).err, &unknown, "the retry shared the flying turn's fate")
				// Decided again on the journal's state, where no deposit landed.
				require.Equal(t, "w1", next(t, prog.decided))
				w := next(t, wd)
				require.NoError(t, w.err)
				require.JSONEq(t, `{"ok":false,"balance":0,"error":"insufficient funds"}`, string(w.r.Payload))
				es := journalOf(t, d, "acct")
				n := turnKeys(es)
				require.Zero(t, n["dep-bob-100"], "the failed append wrote nothing")
				require.Equal(t, 1, n["w1"])
				auditOK(t, es)
			})
		})
	}
}
