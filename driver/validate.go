package driver

import (
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// This file and validate_runs.go, validate_effects.go hold the input rules
// of every *Params type (SPEC §5 "Bad input": validated once, above the
// drivers). Validating (validating.go) applies them before a driver sees a
// call, so a driver holds SQL and error mapping only and both stores refuse
// the same input with the same *journal.InputError (ErrInvalid).

// Bounds of the lists and batches the params carry.
const (
	// MaxRunReclaimBatch bounds one RunReclaim batch.
	MaxRunReclaimBatch = 10000
	// MaxRunEventListLimit bounds one RunEventList page.
	MaxRunEventListLimit = 10000
	// MaxJournalReadLimit bounds one JournalRead page.
	MaxJournalReadLimit = 100000
	// MaxWorldListLimit bounds one WorldList page.
	MaxWorldListLimit = 10000
	// MaxLeaseScanBatch bounds one LeaseScanExpired batch.
	MaxLeaseScanBatch = 10000
	// MaxBatchPayloadBytes bounds the payload bytes (compact, as stored)
	// of one RunEnqueue or JournalAppend call: 32 MiB. A batch is one
	// transaction — on SQLite it holds the single write lock for its whole
	// length, on Postgres it is one statement's parameters — so one call
	// must not carry an unbounded amount (1,000 × 64 KiB, 62 MiB, was
	// accepted). 32 MiB is 512 × MaxPayloadBytes: the largest batch the
	// world appender's group commit forms (512 appends), so a batch of
	// valid appends that it gathered from many callers is never refused
	// for its total.
	MaxBatchPayloadBytes = 512 * journal.MaxPayloadBytes
)

// checkBatchPayload refuses a batch whose normalized payloads total more
// than MaxBatchPayloadBytes. It is a rule of the whole batch (the call is
// refused, nothing is written), checked after each element was normalized,
// so whitespace does not count.
func checkBatchPayload(what string, n int, size func(i int) int) error {
	total := 0
	for i := range n {
		total += size(i)
	}
	if total > MaxBatchPayloadBytes {
		return &journal.InputError{Field: what, Problem: fmt.Sprintf(
			"the batch's payloads total %d bytes of compact JSON, over the limit of %d per call: split it", total, MaxBatchPayloadBytes)}
	}
	return nil
}

// Default page and batch sizes: Validating fills them in, on a copy, where
// a params' Limit is <= 0, so every driver uses the same.
const (
	DefaultWorldListLimit    = 100
	DefaultJournalReadLimit  = 1000
	DefaultLeaseScanBatch    = 100
	DefaultRunReclaimBatch   = 100
	DefaultRunEventListLimit = 1000
)

// orDefault is limit, or def when limit is <= 0.
func orDefault(limit, def int) int {
	if limit <= 0 {
		return def
	}
	return limit
}

// inBatch names the index of a batch's bad element in its error, keeping
// it a *journal.InputError when it is one so every store wraps alike.
func inBatch(what string, i int, err error) error {
	var ie *journal.InputError
	if errors.As(err, &ie) {
		return &journal.InputError{Field: ie.Field, Problem: fmt.Sprintf("%s %d of the batch: %s", what, i, ie.Problem)}
	}
	return fmt.Errorf("%s %d of the batch: %w", what, i, err)
}

// validateRunID checks the id of a read or an operator's write, which name
// a run but carry no fence.
func validateRunID(id int64) error {
	if id <= 0 {
		return &journal.InputError{Field: "id", Problem: fmt.Sprintf("%d is not a run id", id)}
	}
	return nil
}

// normalizeResult validates an optional JSON result and returns it compact;
// none is nil (stored as NULL).
func normalizeResult(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	return runs.NormalizePayload("result", b)
}

// ValidateRead checks a read's range before any query.
func ValidateRead(p *JournalReadParams) error { return p.Validate() }

// Validate implements the input rule of a journal read.
func (p *JournalReadParams) Validate() error {
	if err := journal.ValidateID("world", p.World); err != nil {
		return err
	}
	if p.From < 1 {
		return &journal.InputError{Field: "from", Problem: fmt.Sprintf("position %d is below 1", p.From)}
	}
	if p.Limit < 0 || p.Limit > MaxJournalReadLimit {
		return &journal.InputError{Field: "limit", Problem: fmt.Sprintf("%d is outside 0..%d", p.Limit, MaxJournalReadLimit)}
	}
	return nil
}

// Validate checks the world an append batch names and the batch's payload
// total (MaxBatchPayloadBytes). Each request is checked on its own
// (normalized, in Validating) and a bad one is answered in its outcome,
// not by refusing its neighbours.
func (p *JournalAppendParams) Validate() error {
	if err := journal.ValidateID("world", p.World); err != nil {
		return err
	}
	_, _, _, err := p.normalized()
	return err
}

// normalized returns the batch's valid requests, normalized (payloads
// compact), with their indexes into p.Requests, and an outcome per request
// in which the invalid ones carry their *journal.InputError; err is the
// refusal of the whole batch when the valid requests' payloads total more
// than MaxBatchPayloadBytes.
func (p *JournalAppendParams) normalized() (valid *JournalAppendParams, idx []int, out []journal.AppendOutcome, err error) {
	out = make([]journal.AppendOutcome, len(p.Requests))
	valid = &JournalAppendParams{World: p.World, Requests: make([]journal.AppendRequest, 0, len(p.Requests))}
	idx = make([]int, 0, len(p.Requests))
	signed := journal.Signed(p.Requests)
	for i := range p.Requests {
		r := p.Requests[i] // a copy: validation normalizes the payload
		if err := journal.ValidateAppend(&r); err != nil {
			if signed { // a signed batch is written whole or not at all
				return nil, nil, nil, fmt.Errorf("request %d of a signed batch: %w", i, err)
			}
			out[i].Err = err
			continue
		}
		valid.Requests = append(valid.Requests, r)
		idx = append(idx, i)
	}
	if signed {
		if err := journal.ValidateSignedBatch(valid.Requests); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := checkBatchPayload("requests", len(valid.Requests), func(i int) int { return len(valid.Requests[i].Payload) }); err != nil {
		return nil, nil, nil, err
	}
	return valid, idx, out, nil
}

// Validate checks the world, home and term of a new world (the rule of
// journal.PlanCreate, which the driver applies again at the store's time).
func (p *WorldCreateParams) Validate() error {
	if err := journal.ValidateID("home", p.Home); err != nil {
		return err
	}
	if p.Holder != "" {
		if err := journal.ValidateID("holder", p.Holder); err != nil {
			return err
		}
	}
	_, err := journal.PlanCreate(p.World, p.FirstHolder(), p.Term, time.Time{})
	return err
}

// normalized returns a copy whose term is in the form the journal keeps
// (journal.NormalizeTerm: whole milliseconds, rounded up), so the default
// term stored with the head row is the term its first grant journals.
func (p *WorldCreateParams) normalized() (*WorldCreateParams, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q := *p
	q.Term = journal.NormalizeTerm(p.Term)
	return &q, nil
}

// Validate checks the world id: a read of an id no world can have is
// refused alike on every store (Postgres would otherwise answer a raw
// encoding error where SQLite says not found).
func (p *WorldGetParams) Validate() error { return journal.ValidateID("world", p.World) }

// Validate checks the cursor (empty, or an id), the home filter (empty,
// or an id) and the page size.
func (p *WorldListParams) Validate() error {
	if p.After != "" {
		if err := journal.ValidateID("after", p.After); err != nil {
			return err
		}
	}
	if p.Home != "" {
		if err := journal.ValidateID("home", p.Home); err != nil {
			return err
		}
	}
	if p.Limit < 0 || p.Limit > MaxWorldListLimit {
		return &journal.InputError{Field: "limit", Problem: fmt.Sprintf("%d is outside 0..%d", p.Limit, MaxWorldListLimit)}
	}
	return nil
}

// Validate checks the world id and that there is a planner.
func (p *LeaseChangeParams) Validate() error {
	if err := journal.ValidateID("world", p.World); err != nil {
		return err
	}
	if p.Plan == nil {
		return &journal.InputError{Field: "plan", Problem: "a lease change needs a planner"}
	}
	return nil
}

// Validate checks the batch bound (<= 0 means the default) and the cursor.
func (p *LeaseScanParams) Validate() error {
	if p.Limit > MaxLeaseScanBatch {
		return &journal.InputError{Field: "limit", Problem: fmt.Sprintf("%d is over the limit of %d", p.Limit, MaxLeaseScanBatch)}
	}
	if p.After != nil {
		return journal.ValidateID("after", p.After.World)
	}
	return nil
}

// Validate refuses an empty import; the journal itself is verified by
// PrepareImport, which the driver calls (it needs the store's clock too).
func (p *JournalImportParams) Validate() error {
	if len(p.Entries) == 0 {
		return &journal.InputError{Field: "entries", Problem: "an import needs at least one entry"}
	}
	return nil
}

// The normalized forms of the paged params: valid, and the default Limit
// filled in where it is <= 0 (after the check, so a negative one is still
// refused where the rule refuses it).

func (p *WorldListParams) normalized() (*WorldListParams, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q := *p
	q.Limit = orDefault(p.Limit, DefaultWorldListLimit)
	return &q, nil
}

func (p *LeaseScanParams) normalized() (*LeaseScanParams, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q := *p
	q.Limit = orDefault(p.Limit, DefaultLeaseScanBatch)
	return &q, nil
}

func (p *JournalReadParams) normalized() (*JournalReadParams, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q := *p
	q.Limit = orDefault(p.Limit, DefaultJournalReadLimit)
	return &q, nil
}

func (p *RunReclaimParams) normalized() (*RunReclaimParams, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q := *p
	q.Limit = orDefault(p.Limit, DefaultRunReclaimBatch)
	return &q, nil
}

func (p *RunEventListParams) normalized() (*RunEventListParams, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q := *p
	q.Limit = orDefault(p.Limit, DefaultRunEventListLimit)
	return &q, nil
}
