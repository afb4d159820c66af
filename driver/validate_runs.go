package driver

import (
	"fmt"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// The input rules of the run half's params (see validate.go).

// Validate checks every run of the batch; one invalid run refuses it all.
func (p *RunEnqueueParams) Validate() error { _, err := p.normalized(); return err }

// normalized returns a copy with each run's defaults filled and its payload
// compact; the caller's slice is not changed.
func (p *RunEnqueueParams) normalized() (*RunEnqueueParams, error) {
	es := make([]runs.Enqueue, len(p.Runs))
	for i := range p.Runs {
		es[i] = p.Runs[i]
		if err := runs.ValidateEnqueue(&es[i]); err != nil {
			return nil, err
		}
	}
	return &RunEnqueueParams{Runs: es}, nil
}

// Validate checks the run id.
func (p *RunGetParams) Validate() error { return validateRunID(p.ID) }

// Validate checks the filters, the cursor and the page size.
func (p *RunListParams) Validate() error {
	if p.Queue != "" {
		if err := runs.ValidateQueue(p.Queue); err != nil {
			return err
		}
	}
	if p.State != "" && !p.State.Valid() {
		return &journal.InputError{Field: "state", Problem: fmt.Sprintf("%.40q is not a run state", p.State)}
	}
	if p.Owner != "" {
		if err := journal.ValidateID("owner", p.Owner); err != nil {
			return err
		}
	}
	if len(p.UniqueKey) > runs.MaxUniqueKeyBytes {
		return &journal.InputError{Field: "unique_key", Problem: fmt.Sprintf("%d bytes is over the limit of %d", len(p.UniqueKey), runs.MaxUniqueKeyBytes)}
	}
	if p.AfterID < 0 {
		return &journal.InputError{Field: "after", Problem: fmt.Sprintf("%d is not a run id cursor", p.AfterID)}
	}
	if p.Limit > MaxRunListLimit {
		return &journal.InputError{Field: "limit", Problem: fmt.Sprintf("%d is over the limit of %d", p.Limit, MaxRunListLimit)}
	}
	return nil
}

// Validate checks the queue, owner, batch size and lease of a claim.
func (p *RunClaimParams) Validate() error {
	if err := runs.ValidateQueue(p.Queue); err != nil {
		return err
	}
	if err := journal.ValidateID("owner", p.Owner); err != nil {
		return err
	}
	if p.Limit < 1 || p.Limit > runs.MaxClaimBatch {
		return &journal.InputError{Field: "limit", Problem: fmt.Sprintf("%d is outside 1..%d", p.Limit, runs.MaxClaimBatch)}
	}
	return runs.ValidateLease(p.Lease)
}

// Validate checks a synchronous renewal.
func (p *RunRenewParams) Validate() error {
	if err := runs.ValidateFenced(p.ID, p.Fence); err != nil {
		return err
	}
	if err := journal.ValidateID("owner", p.Owner); err != nil {
		return err
	}
	return runs.ValidateLease(p.Lease)
}

// Validate checks a drain (ValidateRunRenewMany).
func (p *RunRenewManyParams) Validate() error { return ValidateRunRenewMany(p) }

// ValidateRunRenewMany checks a drain before any query.
func ValidateRunRenewMany(p *RunRenewManyParams) error {
	if p.Owners == nil {
		if err := journal.ValidateID("owner", p.Owner); err != nil {
			return err
		}
	} else if len(p.Owners) != len(p.Runs) {
		return &journal.InputError{Field: "owners", Problem: fmt.Sprintf("%d owners for %d renewals", len(p.Owners), len(p.Runs))}
	}
	for i, o := range p.Owners {
		if err := journal.ValidateID("owner", o); err != nil {
			return inBatch("renewal", i, err)
		}
	}
	if err := runs.ValidateLease(p.Lease); err != nil {
		return err
	}
	if len(p.Runs) > MaxRunRenewBatch {
		return &journal.InputError{Field: "runs", Problem: fmt.Sprintf("%d renewals is over the limit of %d", len(p.Runs), MaxRunRenewBatch)}
	}
	seen := make(map[int64]int, len(p.Runs))
	for i, r := range p.Runs {
		if err := runs.ValidateFenced(r.ID, r.Fence); err != nil {
			return inBatch("renewal", i, err)
		}
		// One run under two fences in one drain is a keeper bug: at most
		// one of its entries can be current.
		if j, dup := seen[r.ID]; dup {
			return &journal.InputError{Field: "id", Problem: fmt.Sprintf("run %d is renewed twice in one batch (renewals %d and %d)", r.ID, j, i)}
		}
		seen[r.ID] = i
	}
	return nil
}

// Validate checks a completion and its optional JSON result.
func (p *RunCompleteParams) Validate() error { _, err := p.normalized(); return err }

// normalized returns a copy whose result is compact (nil when none).
func (p *RunCompleteParams) normalized() (*RunCompleteParams, error) {
	if err := runs.ValidateFenced(p.ID, p.Fence); err != nil {
		return nil, err
	}
	result, err := normalizeResult(p.Result)
	if err != nil {
		return nil, err
	}
	return &RunCompleteParams{ID: p.ID, Fence: p.Fence, Result: result}, nil
}

// Validate checks a batch of completions (ValidateRunCompleteMany).
func (p *RunCompleteManyParams) Validate() error { _, err := p.normalized(); return err }

// normalized returns a copy whose results are compact (nil when none).
func (p *RunCompleteManyParams) normalized() (*RunCompleteManyParams, error) {
	results, err := ValidateRunCompleteMany(p.Runs)
	if err != nil {
		return nil, err
	}
	cs := make([]RunCompletion, len(p.Runs))
	for i, c := range p.Runs {
		cs[i] = RunCompletion{ID: c.ID, Fence: c.Fence, Result: results[i]}
	}
	return &RunCompleteManyParams{Runs: cs}, nil
}

// ValidateRunCompleteMany checks a batch before any query and returns
// each completion's result normalized to compact JSON (nil, stored as
// NULL, where none is given). A problem of one completion names its index.
func ValidateRunCompleteMany(cs []RunCompletion) ([][]byte, error) {
	if len(cs) > MaxRunCompleteBatch {
		return nil, &journal.InputError{Field: "runs", Problem: fmt.Sprintf("%d completions is over the limit of %d", len(cs), MaxRunCompleteBatch)}
	}
	results := make([][]byte, len(cs))
	// A run twice in one batch is a caller's bug (one claim completed
	// twice); refusing it also keeps each run to at most one change per
	// statement, which Postgres's UPDATE … FROM would otherwise apply
	// from whichever duplicate it met first.
	seen := make(map[int64]int, len(cs))
	for i := range cs {
		c := &cs[i]
		var err error
		if results[i], err = ValidateRunCompletion(c); err != nil {
			return nil, inBatch("completion", i, err)
		}
		if j, dup := seen[c.ID]; dup {
			return nil, &journal.InputError{Field: "id", Problem: fmt.Sprintf("run %d is completed twice in one batch (completions %d and %d)", c.ID, j, i)}
		}
		seen[c.ID] = i
	}
	return results, nil
}

// ValidateRunCompletion checks one completion as ValidateRunCompleteMany
// checks each of a batch, and returns its result normalized.
func ValidateRunCompletion(c *RunCompletion) ([]byte, error) {
	if err := runs.ValidateFenced(c.ID, c.Fence); err != nil {
		return nil, err
	}
	return normalizeResult(c.Result)
}

// Validate checks a failed attempt: identity, reason and retry delay.
func (p *RunFailParams) Validate() error {
	if err := ValidateRunWrite(p.ID, p.Fence, p.Reason); err != nil {
		return err
	}
	if p.RetryAfter < 0 || p.RetryAfter > runs.MaxDelay {
		return &journal.InputError{Field: "retry_after", Problem: fmt.Sprintf("%s is outside 0..%s", p.RetryAfter, runs.MaxDelay)}
	}
	return nil
}

// Validate checks a block: identity and reason.
func (p *RunBlockParams) Validate() error { return ValidateRunWrite(p.ID, p.Fence, p.Reason) }

// Validate checks the run id.
func (p *RunUnblockParams) Validate() error { return validateRunID(p.ID) }

// Validate checks the run id and the reason.
func (p *RunCancelParams) Validate() error {
	if err := validateRunID(p.ID); err != nil {
		return err
	}
	return runs.ValidateReason(p.Reason)
}

// Validate checks the batch bound (<= 0 means the driver's default).
func (p *RunReclaimParams) Validate() error {
	if p.Limit > MaxRunReclaimBatch {
		return &journal.InputError{Field: "limit", Problem: fmt.Sprintf("%d is over the limit of %d", p.Limit, MaxRunReclaimBatch)}
	}
	return nil
}

// ValidateRunWrite checks a fenced write's identity (and its reason)
// before any query.
func ValidateRunWrite(id, fence int64, reason string) error {
	if err := runs.ValidateFenced(id, fence); err != nil {
		return err
	}
	return runs.ValidateReason(reason)
}
