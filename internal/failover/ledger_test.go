package failover

import (
	"context"
	"sync"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// ledger is the test's record of every write the store acknowledged, with
// when, so the checks can tell what was acknowledged before a moment.
type ledger struct {
	mu          sync.Mutex
	completions []ackCompletion
	effects     []ackEffect
	events      []ackEvent
	appends     []ackAppend
	uncertain   map[string]int // effect idempotency key → uncertain reports
	unknown     int            // writes whose outcome was unknown (failed without an answer)
	invocations []invocation
	claims      map[[2]int64]int // (run, fence) → handler starts under it
	reissued    int              // handler starts under a (run, fence) an earlier one had

	killedAt  time.Time // zero until the kill
	firstSeen time.Time // the end of the first write started after the kill that succeeded
	firstOp   string
}

type ackCompletion struct {
	run, fence int64
	at         time.Time
}

type ackEffect struct {
	run   int64
	key   string
	fence int64
	at    time.Time
}

type ackEvent struct {
	run, fence, seq int64
	payload         string
	at              time.Time
}

type ackAppend struct {
	key       string
	pos       int64
	start, at time.Time // the call that was answered began at start
}

// invocation is an effect call the witness accepted, as the handler saw it.
// key is the test's own name of the effect (run id and effect key), not
// the token's, so that an idempotency key that changed between holders
// would show as an effect applied twice.
type invocation struct {
	key     string
	fence   int64
	at      time.Time
	deduped bool // the witness answered with the key's first result
}

func newLedger() *ledger { return &ledger{uncertain: map[string]int{}, claims: map[[2]int64]int{}} }

// claimed notes a handler start: one per claim. A (run, fence) that an
// earlier start already had is a fence handed out twice — two holders with
// one fence, which no fence check can tell apart.
func (l *ledger) claimed(run, fence int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := [2]int64{run, fence}
	if l.claims[k] > 0 {
		l.reissued++
	}
	l.claims[k]++
}

// kill marks the moment of the kill.
func (l *ledger) kill(at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.killedAt = at
}

// wrote notes a write that started at start and succeeded now.
func (l *ledger) wrote(op string, start time.Time) time.Time {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.killedAt.IsZero() && start.After(l.killedAt) && l.firstSeen.IsZero() {
		l.firstSeen, l.firstOp = now, op
	}
	return now
}

func (l *ledger) completed(run, fence int64, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.completions = append(l.completions, ackCompletion{run: run, fence: fence, at: at})
}

func (l *ledger) effect(run int64, key string, fence int64, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.effects = append(l.effects, ackEffect{run: run, key: key, fence: fence, at: at})
}

func (l *ledger) event(run, fence, seq int64, payload string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ackEvent{run: run, fence: fence, seq: seq, payload: payload, at: at})
}

func (l *ledger) appended(key string, pos int64, start, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.appends = append(l.appends, ackAppend{key: key, pos: pos, start: start, at: at})
}

func (l *ledger) invoked(key string, fence int64, deduped bool) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.invocations = append(l.invocations, invocation{key: key, fence: fence, at: now, deduped: deduped})
}

func (l *ledger) uncertainReport(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.uncertain[key]++
}

func (l *ledger) unknownOutcome() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unknown++
}

// counts is the number of acknowledged completions, events and appends.
func (l *ledger) counts() (completions, events, appends int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.completions), len(l.events), len(l.appends)
}

// recorder is the store as the client sees it: every call goes to the
// Postgres driver; the writes the ledger needs are noted when the store
// answered them. Nothing is changed on the way.
type recorder struct {
	driver.Driver
	l *ledger
}

func (r *recorder) RunClaim(ctx context.Context, p *driver.RunClaimParams) ([]*driver.Run, error) {
	start := time.Now()
	rs, err := r.Driver.RunClaim(ctx, p)
	if err == nil && len(rs) > 0 {
		r.l.wrote("claim", start)
	}
	return rs, err
}

func (r *recorder) RunCompleteMany(ctx context.Context, p *driver.RunCompleteManyParams) (*driver.RunCompleteManyResult, error) {
	start := time.Now()
	res, err := r.Driver.RunCompleteMany(ctx, p)
	if err != nil {
		r.l.unknownOutcome()
		return res, err
	}
	at := r.l.wrote("complete", start)
	fenced := map[int]bool{}
	for _, i := range res.Fenced {
		fenced[i] = true
	}
	for i, c := range p.Runs {
		if !fenced[i] {
			r.l.completed(c.ID, c.Fence, at)
		}
	}
	return res, err
}

func (r *recorder) RunComplete(ctx context.Context, p *driver.RunCompleteParams) (*driver.Run, error) {
	start := time.Now()
	run, err := r.Driver.RunComplete(ctx, p)
	if err == nil {
		r.l.completed(p.ID, p.Fence, r.l.wrote("complete", start))
	}
	return run, err
}

func (r *recorder) RunEffectCommit(ctx context.Context, p *driver.RunEffectCommitParams) (*driver.Effect, error) {
	start := time.Now()
	e, err := r.Driver.RunEffectCommit(ctx, p)
	if err == nil {
		r.l.effect(p.RunID, p.Key, p.Fence, r.l.wrote("effect commit", start))
	}
	return e, err
}

func (r *recorder) JournalAppend(ctx context.Context, p *driver.JournalAppendParams) ([]journal.AppendOutcome, error) {
	start := time.Now()
	outs, err := r.Driver.JournalAppend(ctx, p)
	if err == nil {
		r.l.wrote("journal append", start)
	}
	return outs, err
}
