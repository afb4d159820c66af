package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/bits"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/journal"
)

// WorldsConfig shapes the hot-world load: Submitters clients, each with
// InFlight commands outstanding, against one world for three phases of
// Phase each — on its home, on a spill node, home again.
type WorldsConfig struct {
	Submitters int
	InFlight   int
	Phase      time.Duration
	MaxBatch   int // host.Config.MaxBatch; 0: the host's default
}

// WorldsPhase is one phase's throughput.
type WorldsPhase struct {
	Name     string
	Acked    int
	Elapsed  time.Duration
	P50, P99 time.Duration
}

// PerSecond is the phase's acknowledged commands per second.
func (p WorldsPhase) PerSecond() float64 { return float64(p.Acked) / p.Elapsed.Seconds() }

// WorldsResult is what Worlds measured and checked.
type WorldsResult struct {
	Phases []WorldsPhase
	// Handoffs is how long each handoff call took (home → spill, spill →
	// home), and Gaps the longest time without an acknowledgement around
	// each (from the call to a second after it returned).
	Handoffs, Gaps []time.Duration
	// GapAt is where each longest gap began, from the handoff call's
	// start (the receiver's replays come first, then the handoff).
	GapAt []time.Duration
	// Acked is the commands acknowledged; Lost the acknowledged ones whose
	// key is not in the journal; Duplicated the keys journaled more than
	// once; Balance whether the ledger's sum equals the deposits acked.
	Acked, Lost, Duplicated int
	Balanced                bool
	// ProcessCPU is this process's CPU over the load (hosts, submitters
	// and, on SQLite, the store's engine); PostgresCPU every local
	// postgres process's (other clients' too; 0 when there is none).
	ProcessCPU, PostgresCPU time.Duration
	// Hosts is each host's counters at the end ("home", "spill").
	Hosts map[string]host.Stats
	// BatchSizes counts the journal appends by entries carried: bucket i
	// holds the batches of 2^i to 2^(i+1)-1 entries.
	BatchSizes [11]int64
}

// sizedStore counts each journal append's entries (WorldsResult.BatchSizes).
type sizedStore struct {
	driver.Driver
	sizes *[11]atomic.Int64
}

func (s sizedStore) JournalAppend(ctx context.Context, p *driver.JournalAppendParams) ([]journal.AppendOutcome, error) {
	s.sizes[min(bits.Len(uint(len(p.Requests)))-1, 10)].Add(1)
	return s.Driver.JournalAppend(ctx, p)
}

type ack struct {
	at, lat time.Duration // since the start; latency
}

// Worlds runs the hot-world load on d (a fresh store): the bank program on
// two hosts, "home" and "spill", in this process.
func Worlds(ctx context.Context, d driver.Driver, cfg WorldsConfig) (WorldsResult, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("LEASEHOLD_BENCH_LOG") != "" {
		quiet = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	var sizes [11]atomic.Int64
	hostStore := sizedStore{Driver: d, sizes: &sizes}
	mk := func(node string) (*host.Host, error) {
		return host.New(host.Config{Store: hostStore, Node: node, Program: programs.Bank{}, Logger: quiet, InboxLimit: 1 << 20, MaxBatch: cfg.MaxBatch})
	}
	home, err := mk("home")
	if err != nil {
		return WorldsResult{}, err
	}
	spill, err := mk("spill")
	if err != nil {
		return WorldsResult{}, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = home.Stop(sctx)
		_ = spill.Stop(sctx)
	}()
	const w = "hot"
	if err := home.Create(ctx, w); err != nil {
		return WorldsResult{}, err
	}
	r := host.NewRouter(d, home, spill)

	cpu0 := ProcessCPU()
	pg0, _ := PostgresCPU()
	start := time.Now()
	var stop atomic.Bool
	var mu sync.Mutex
	var acks []ack
	var acked []string
	var firstErr error
	var wg sync.WaitGroup
	for s := range cfg.Submitters {
		for g := range cfg.InFlight {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine []ack
				var keys []string
				for n := 0; !stop.Load(); n++ {
					key := fmt.Sprintf("s%d-g%d-%d", s, g, n)
					cmd := host.Command{Key: key, Payload: json.RawMessage(fmt.Sprintf(`{"op":"deposit","account":"a%d","amount":1}`, s))}
					t0 := time.Since(start)
					if _, err := r.Submit(ctx, w, cmd); err != nil {
						mu.Lock()
						firstErr = cmp(firstErr, fmt.Errorf("%s: %w", key, err))
						mu.Unlock()
						break
					}
					t1 := time.Since(start)
					mine = append(mine, ack{at: t1, lat: t1 - t0})
					keys = append(keys, key)
				}
				mu.Lock()
				acks = append(acks, mine...)
				acked = append(acked, keys...)
				mu.Unlock()
			}()
		}
	}
	res := WorldsResult{}
	var marks []time.Duration // phase boundaries, since start
	var hoStart, hoEnd []time.Duration
	sleep := func() bool {
		select {
		case <-time.After(cfg.Phase):
			return true
		case <-ctx.Done():
			return false
		}
	}
	marks = append(marks, 0)
	for i, ho := range [][2]string{{"home", "spill"}, {"spill", "home"}} {
		if !sleep() {
			break
		}
		t0 := time.Since(start)
		err := r.Handoff(ctx, w, ho[0], ho[1])
		t1 := time.Since(start)
		if err != nil {
			stop.Store(true)
			wg.Wait()
			return res, fmt.Errorf("handoff %d %s → %s: %w", i+1, ho[0], ho[1], err)
		}
		hoStart, hoEnd = append(hoStart, t0), append(hoEnd, t1)
		res.Handoffs = append(res.Handoffs, t1-t0)
		marks = append(marks, t1)
	}
	sleep()
	stop.Store(true)
	wg.Wait()
	end := time.Since(start)
	res.ProcessCPU = ProcessCPU() - cpu0
	if pg1, err := PostgresCPU(); err == nil {
		res.PostgresCPU = pg1 - pg0
	}
	res.Hosts = map[string]host.Stats{"home": home.Stats(), "spill": spill.Stats()}
	for i := range sizes {
		res.BatchSizes[i] = sizes[i].Load()
	}
	marks = append(marks, end)
	if firstErr != nil {
		return res, firstErr
	}
	slices.SortFunc(acks, func(a, b ack) int { return int(a.at - b.at) })
	res.Acked = len(acks)
	for i, name := range []string{"home", "spill", "home again"} {
		if i+1 >= len(marks) {
			break
		}
		from, to := marks[i], marks[i+1]
		var lats []time.Duration
		for _, a := range acks {
			if a.at >= from && a.at < to {
				lats = append(lats, a.lat)
			}
		}
		slices.Sort(lats)
		p := WorldsPhase{Name: name, Acked: len(lats), Elapsed: to - from}
		if len(lats) > 0 {
			p.P50, p.P99 = lats[len(lats)/2], lats[len(lats)*99/100]
		}
		res.Phases = append(res.Phases, p)
	}
	for i := range hoStart {
		from, to := hoStart[i], hoEnd[i]+time.Second
		var gap, at time.Duration
		prev := from
		for _, a := range acks {
			if a.at < from {
				continue
			}
			if a.at > to {
				break
			}
			if a.at-prev > gap {
				gap, at = a.at-prev, prev-from
			}
			prev = a.at
		}
		res.Gaps = append(res.Gaps, gap)
		res.GapAt = append(res.GapAt, at)
	}

	// The witness: the journal itself, read back and checked against what
	// was acknowledged.
	counts := map[string]int{}
	var sum int64
	for from := int64(1); ; {
		es, err := d.JournalRead(ctx, &driver.JournalReadParams{World: w, From: from, Limit: 10_000})
		if err != nil {
			return res, err
		}
		for _, e := range es {
			if e.Kind != host.TurnKind {
				continue
			}
			counts[e.Key]++
			var tr struct {
				E []struct{ D struct{ N int64 } }
			}
			if err := json.Unmarshal(e.Payload, &tr); err != nil {
				return res, err
			}
			for _, ev := range tr.E {
				sum += ev.D.N
			}
		}
		if len(es) < 10_000 {
			break
		}
		from = es[len(es)-1].Position + 1
	}
	for _, k := range acked {
		if counts[k] == 0 {
			res.Lost++
		}
	}
	for _, n := range counts {
		if n > 1 {
			res.Duplicated++
		}
	}
	res.Balanced = sum == int64(len(counts)) && len(counts) >= len(acked)
	return res, nil
}

func cmp(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
