package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// JournalAppend implements driver.Driver: the whole batch is one statement
// in autocommit — one round trip, one transaction, one WAL flush. A batch
// of one request is appendOneSQL (journal_one.go), which answers through
// the function whenever the request is not simply accepted; any other
// batch is one call of leasehold_journal_append (migration 0002). The
// function takes the world's row lock,
// reads the store clock under it, applies the append rule of
// journal.CheckAppend and the rejection bound of journal.PlanAppend, and
// chains the hashes of journal.Canonical; the conformance suite holds it to
// the Go planner entry for entry, hash for hash.
//
// If ctx has a deadline, the server's lock and statement timeouts are set
// just short of it, so an append that cannot commit in time is rolled back
// by the server and reported as context.DeadlineExceeded with nothing
// written; the client listens for that answer — or for the positions
// written — up to the same margin past the deadline (answerCtx). A ctx
// cancelled before its deadline, or without one, closes the connection and
// leaves the outcome unknown (the pipelined COMMIT may still run), as does
// no answer by the margin past the deadline.
func (d *store) JournalAppend(ctx context.Context, p *driver.JournalAppendParams) ([]journal.AppendOutcome, error) {
	if !journal.Signed(p.Requests) {
		out, _, err := d.appendOnceOrFunction(ctx, p, signedArgs{})
		return out, err
	}
	// A signed batch (journal/sign.go): verified here, in Go, against the
	// key this process last saw the epoch's grant carry; the function
	// takes the verdict only if that is the head's key, and otherwise
	// answers the key (key_unknown) for one more try.
	r0 := &p.Requests[0]
	key, known := d.keys.get(p.World, r0.Epoch)
	for try := 0; ; try++ {
		sa := signedArgs{sig: p.Requests[len(p.Requests)-1].Signature}
		if known {
			sa.key, sa.ok = key, journal.VerifyBatch(key, requestEntries(p), sa.sig)
		}
		out, learned, err := d.appendOnceOrFunction(ctx, p, sa)
		if err != nil || learned == nil || try > 0 {
			if err == nil && learned != nil {
				return nil, fmt.Errorf("postgres: append to %q: the epoch's key changed twice under one append: %w", p.World, driver.ErrConflict)
			}
			return out, err
		}
		key, known = learned, true
		d.keys.put(p.World, r0.Epoch, key)
	}
}

// requestEntries are the entries a signed batch asks for, at the
// positions it names: what its signature covers.
func requestEntries(p *driver.JournalAppendParams) []journal.Entry {
	es := make([]journal.Entry, len(p.Requests))
	for i := range p.Requests {
		r := &p.Requests[i]
		es[i] = journal.Entry{World: p.World, Position: r.Position, Epoch: r.Epoch, Kind: r.Kind, Holder: r.Holder,
			Key: r.Key, Payload: r.Payload}
	}
	return es
}

// signedArgs are the signed batch's parameters of leasehold_journal_append:
// the signature (nil: unsigned), the key the driver verified it against
// (nil: none known) and the verdict.
type signedArgs struct {
	sig, key []byte
	ok       bool
}

// appendOnceOrFunction appends a batch in one statement that needs the
// PL/pgSQL function only when it does not simply accept the batch:
// appendOneSQL for one request, appendManySQL for more (journal_many.go)
// unless two requests share a key, which the function answers. When the
// one statement finds the lease expired under the head's lock (it wrote
// nothing), the function answers, judging the expiry again under the lock
// and journaling the refusal as any expired append's.
func (d *store) appendOnceOrFunction(ctx context.Context, p *driver.JournalAppendParams, sa signedArgs) ([]journal.AppendOutcome, []byte, error) {
	if len(p.Requests) > 1 && !distinctKeys(p) {
		return d.appendOnce(ctx, p, sa, false)
	}
	out, learned, err := d.appendOnce(ctx, p, sa, true)
	if errors.Is(err, errExpiredUnderLock) {
		return d.appendOnce(ctx, p, sa, false)
	}
	return out, learned, err
}

// answerCtx is the context an append's round trip runs under when its
// caller has a deadline dl: the caller's values, ending margin after dl.
// The server's timeouts are set to end margin before dl (appendOnce), so
// the server has normally decided — committed, or rolled back by its
// timeout — before this context ends, and the caller hears which even when
// its own deadline passed meanwhile (a busy client sends late; a lock freed
// at the last moment lets the append commit just after dl). Not always:
// the server's timer starts only when the statement does (after the
// client's delay in sending, more than margin on a stalled client), and
// the commit's WAL flush is outside it; such an answer too late is an
// unknown outcome, reported as one. Under the caller's own
// context such an append was reported as the deadline's error although it
// committed — an unknown outcome, which a keyless append retried on that
// error would journal twice (TestAppendSentLateIsAnsweredByTheServer).
//
// A cancellation is not a deadline: the caller (or the Appender's Stop)
// asked to stop waiting, so it still cuts the round trip short, outcome
// unknown, as does no answer by margin after dl (the server or the
// network stalled).
func answerCtx(ctx context.Context, dl time.Time, margin time.Duration) (context.Context, context.CancelFunc) {
	sendCtx, cancelDeadline := context.WithDeadline(context.WithoutCancel(ctx), dl.Add(margin))
	sendCtx, cancel := context.WithCancelCause(sendCtx)
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel(context.Cause(ctx)) // the caller's own cause, for its error
		}
	})
	return sendCtx, func() { stop(); cancel(nil); cancelDeadline() }
}

// appendOnce is one statement: appendOneSQL or appendManySQL when fast,
// else a call of leasehold_journal_append. learned is the key the head's
// epoch carries when the function answered key_unknown.
func (d *store) appendOnce(ctx context.Context, p *driver.JournalAppendParams, sa signedArgs, fast bool) (_ []journal.AppendOutcome, learned []byte, _ error) {
	out := make([]journal.AppendOutcome, len(p.Requests))
	n := len(p.Requests)
	if n == 0 {
		return out, nil, nil
	}
	var now *time.Time
	if d.clock != nil {
		t := journal.NormalizeTime(d.clock.Now())
		now = &t
	}
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: append to %q: %w", p.World, err)
	}
	defer conn.Release()
	defer d.endTx(ctx, conn) // a failed statement leaves the transaction open (aborted)

	// One pipeline, one round trip, one transaction: the pipeline ends in a
	// single Sync, and the server runs every statement before a Sync in one
	// implicit transaction that commits at the Sync (protocol, "Pipelining")
	// — so no BEGIN and COMMIT statements (two of the four statements an
	// append was). The server's lock and statement timeouts are set to what
	// is left of the caller's deadline by set_config(…, true), local to that
	// transaction: a caller that gives up while its append queues for the
	// world's lock must not have it committed later, unseen. (Only the
	// unavoidable window of a lost commit reply stays an unknown outcome.)
	b := &pgx.Batch{}
	dl, hasDeadline := ctx.Deadline()
	// sendCtx is the context of the round trip (see answerCtx).
	sendCtx := ctx
	if hasDeadline {
		// The server gives up a margin before the caller's deadline, so it
		// decides — written, or rolled back by its timeout — while the
		// caller still listens. The margin covers the round trip and a busy
		// client's scheduling delay (a twentieth, at most 50ms, was too thin
		// on a loaded machine).
		left := time.Until(dl)
		if left <= 0 { // passed, its timer not yet run: nothing sent, nothing written
			return nil, nil, fmt.Errorf("postgres: append to %q: nothing written: %w", p.World, context.DeadlineExceeded)
		}
		margin := min(left/4, 250*time.Millisecond)
		ms := fmt.Sprintf("%dms", max((left-margin).Milliseconds(), 1))
		b.Queue("SELECT set_config('lock_timeout', $1, true), set_config('statement_timeout', $1, true)", ms)
		var cancel context.CancelFunc
		sendCtx, cancel = answerCtx(ctx, dl, margin)
		defer cancel()
	}
	// The one-statement appends (appendOneSQL, appendMany*SQL) must stay
	// the only writer of their transaction, as here (an implicit one,
	// ended by the batch's Sync): each sets leasehold.journal_notified for
	// the whole transaction and notifies its own world only, so another
	// world's entries written later in the same transaction would wake no
	// listener (migration 0026; found by review, not reachable today).
	if fast && n == 1 {
		r := &p.Requests[0]
		q := appendOneSQL
		if r.Key != "" {
			q = appendOneKeyedSQL
		}
		b.Queue(q, p.World, now, r.Holder, r.Epoch, r.SeenPosition, string(r.Kind), r.Key, nonNil(r.Payload),
			r.Position, nonNil(sa.sig), sa.key, sa.ok)
	} else {
		holders, epochs, seens := make([]string, n), make([]int64, n), make([]int64, n)
		kinds, keys, payloads, posns := make([]string, n), make([]string, n), make([][]byte, n), make([]int64, n)
		keyed := false
		for i := range p.Requests {
			r := &p.Requests[i] // valid and normalized: driver.Validating
			holders[i], epochs[i], seens[i] = r.Holder, r.Epoch, r.SeenPosition
			kinds[i], keys[i], payloads[i], posns[i] = string(r.Kind), r.Key, nonNil(r.Payload), r.Position
			keyed = keyed || r.Key != ""
		}
		q := `SELECT o_position, o_reason, o_epoch, o_holder, o_key
		FROM leasehold_journal_append($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`
		switch {
		case fast && keyed:
			q = appendManyKeyedSQL
		case fast:
			q = appendManySQL
		}
		b.Queue(q, p.World, now, holders, epochs, seens, kinds, keys, payloads, posns, nonNil(sa.sig), sa.key, sa.ok)
	}
	if d.beforeSend != nil {
		d.beforeSend()
	}
	if err := ctx.Err(); err != nil { // nothing sent: nothing written
		return nil, nil, fmt.Errorf("postgres: append to %q: nothing written: %w", p.World, err)
	}
	br := conn.SendBatch(sendCtx, b)
	if d.afterSend != nil {
		d.afterSend()
	}
	defer br.Close()
	fail := func(err error) ([]journal.AppendOutcome, []byte, error) {
		var pe *pgconn.PgError
		switch {
		case hasDeadline && isServerTimeout(err):
			// The timeouts set from the caller's deadline fired: the
			// transaction was rolled back and nothing was written.
			return nil, nil, fmt.Errorf("postgres: append to %q: nothing written: %w (%v)", p.World, context.DeadlineExceeded, err)
		case fast && isExpiredUnderLock(err):
			return nil, nil, errExpiredUnderLock
		case isNoData(err):
			return nil, nil, fmt.Errorf("world %q: %w", p.World, driver.ErrNotFound)
		case sendCtx.Err() != nil && !errors.As(err, &pe):
			// No answer in time (or, without a deadline, the caller's
			// cancellation cut the round trip): the outcome is unknown.
			return nil, nil, fmt.Errorf("postgres: append to %q: outcome unknown: %w", p.World, context.Cause(sendCtx))
		}
		// The server's own answer, whatever became of the caller's context
		// meanwhile (a refusal is as definite as a success) — or a
		// connection broken with the round trip's context still live, whose
		// outcome, as before answerCtx, the caller must treat as unknown.
		return nil, nil, fmt.Errorf("postgres: append to %q: %w", p.World, mapWriteError(err))
	}
	for range b.Len() - 1 { // the timeouts
		if _, err := br.Exec(); err != nil {
			return fail(err)
		}
	}
	rows, err := br.Query()
	if err != nil {
		return fail(err)
	}
	k := 0
	for rows.Next() {
		var pos, epoch int64
		var reason *string
		var holder string
		var okey []byte
		if err := rows.Scan(&pos, &reason, &epoch, &holder, &okey); err != nil {
			rows.Close()
			return fail(err)
		}
		if k >= n {
			rows.Close()
			return nil, nil, fmt.Errorf("postgres: append to %q: more outcomes than requests", p.World)
		}
		if reason != nil && *reason == "key_unknown" {
			learned = okey
		}
		i := k
		k++
		if reason == nil {
			out[i].Position = pos
			continue
		}
		out[i].Err = &journal.RefusedError{Op: "append", World: p.World, Holder: p.Requests[i].Holder, Epoch: p.Requests[i].Epoch,
			Reason: journal.Reason(*reason), CurrentEpoch: epoch, CurrentHolder: holder}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	// The Sync's reply: the implicit transaction's commit. Only now is the
	// batch durable; an error here (the commit's) means nothing was written.
	if err := br.Close(); err != nil {
		return fail(err)
	}
	if k != n {
		return nil, nil, fmt.Errorf("postgres: append to %q: %d outcomes for %d requests", p.World, k, n)
	}
	if learned != nil {
		return nil, learned, nil
	}
	return out, nil, nil
}

// JournalRead implements driver.Driver.
func (d *store) JournalRead(ctx context.Context, p *driver.JournalReadParams) ([]journal.Entry, error) {
	limit := p.Limit // > 0: defaulted by driver.Validating
	out, err := d.readEntries(ctx, p, limit)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 { // an empty range of a missing world is ErrNotFound
		if _, err := d.WorldGet(ctx, &driver.WorldGetParams{World: p.World}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readEntries holds its connection only for the query, so the existence
// check after an empty read takes a connection of its own without holding
// two (which starves the pool under concurrent tail reads).
func (d *store) readEntries(ctx context.Context, p *driver.JournalReadParams, limit int) ([]journal.Entry, error) {
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading journal %q: %w", p.World, err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, `SELECT `+driver.EntryColumns+` FROM journal_entries WHERE world = $1 AND position >= $2 ORDER BY position LIMIT $3`,
		p.World, p.From, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading journal %q: %w", p.World, err)
	}
	defer rows.Close()
	out, err := driver.CollectRows(rows, func() (journal.Entry, error) { return driver.ScanEntry(rows.Scan, time.Time.UTC) })
	if err != nil {
		return nil, fmt.Errorf("postgres: reading journal %q: %w", p.World, err)
	}
	return out, nil
}
