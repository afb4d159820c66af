package worldfault

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/leasehold/host"
)

// peerLog wraps a host's Remote for the router and records what each
// submission to it met: how many, how long the slowest took, and every
// error the router retried past (Router.Submit returns only the last). A
// scenario that misses its progress prints it, so a slow run says where
// the time went.
type peerLog struct {
	host.Peer
	mu      sync.Mutex
	submits int
	slowest time.Duration
	slow    int // submissions that took ≥ 1 s
	errs    map[string]int
}

func (p *peerLog) Submit(ctx context.Context, w string, cmd host.Command) (host.Reply, error) {
	start := time.Now()
	rep, err := p.Peer.Submit(ctx, w, cmd)
	took := time.Since(start)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.submits++
	p.slowest = max(p.slowest, took)
	if took >= time.Second {
		p.slow++
	}
	if err != nil {
		if p.errs == nil {
			p.errs = map[string]int{}
		}
		msg := err.Error()
		if len(msg) > 160 {
			msg = msg[:160]
		}
		p.errs[fmt.Sprintf("%T: %s", err, msg)]++
	}
	return rep, err
}

func (p *peerLog) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d submissions, %d took ≥ 1 s, slowest %s", p.Node(), p.submits, p.slow, p.slowest.Round(time.Millisecond))
	keys := make([]string, 0, len(p.errs))
	for k := range p.errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "\n    %d× %s", p.errs[k], k)
	}
	return b.String()
}

// explainSlow logs, for a scenario that missed its progress, what the
// router's submissions met, each host's counters, and the store's
// sessions that were busy (a lock wait shows here).
func (s *scenario) explainSlow() {
	t := s.t
	s.mu.Lock()
	logs := append([]*peerLog(nil), s.peerLogs...)
	procs := make([]*hostProc, 0, len(s.procs))
	for _, p := range s.procs {
		procs = append(procs, p)
	}
	s.mu.Unlock()
	for _, l := range logs {
		t.Logf("router → %s", l)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for _, p := range procs {
		resp, err := client.Get(p.base + "/v1/status")
		if err != nil {
			t.Logf("host %s status: %v", p.node, err)
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
		resp.Body.Close()
		t.Logf("host %s status: %s", p.node, b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		t.Logf("pg_stat_activity: %v", err)
		return
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT pid, state, coalesce(wait_event_type,''), coalesce(wait_event,''),
		coalesce(extract(epoch FROM clock_timestamp()-query_start)::text,''), left(query, 200)
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`)
	if err != nil {
		t.Logf("pg_stat_activity: %v", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var pid int32
		var state, wt, we, age, q string
		if err := rows.Scan(&pid, &state, &wt, &we, &age, &q); err != nil {
			t.Logf("pg_stat_activity: %v", err)
			return
		}
		t.Logf("session %d %s wait=%s/%s for %ss: %s", pid, state, wt, we, age, q)
	}
}
