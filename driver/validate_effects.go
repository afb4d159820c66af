package driver

import (
	"fmt"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// The input rules of the effect ledger's and the event log's params (see
// validate.go).

// validateEffect checks an effect's identity: a run id and fence a claim
// could have issued, and a non-empty key of at most journal.MaxKeyBytes
// without control characters or invalid UTF-8.
func validateEffect(id, fence int64, key string) error {
	if err := runs.ValidateFenced(id, fence); err != nil {
		return err
	}
	if key == "" {
		return &journal.InputError{Field: "key", Problem: "an effect needs a key"}
	}
	return journal.ValidateKey(key)
}

// normalizeEffect checks an effect's identity and its optional JSON result,
// which it replaces with its compact form (nil when none).
func normalizeEffect(id, fence int64, key string, result *[]byte) error {
	if err := validateEffect(id, fence, key); err != nil {
		return err
	}
	r, err := normalizeResult(*result)
	*result = r
	return err
}

// Validate checks the effect's identity.
func (p *RunEffectParams) Validate() error { return validateEffect(p.RunID, p.Fence, p.Key) }

// Validate checks the effect's identity and its optional JSON result.
func (p *RunEffectCommitParams) Validate() error { _, err := p.normalized(); return err }

// normalized returns a copy whose result is compact (nil when none).
func (p *RunEffectCommitParams) normalized() (*RunEffectCommitParams, error) {
	c := *p
	return &c, normalizeEffect(c.RunID, c.Fence, c.Key, &c.Result)
}

// Validate checks the effect's identity and its optional JSON result (also
// when the result will not be stored).
func (p *RunEffectResolveParams) Validate() error { _, err := p.normalized(); return err }

// normalized returns a copy whose result is compact (nil when none).
func (p *RunEffectResolveParams) normalized() (*RunEffectResolveParams, error) {
	c := *p
	return &c, normalizeEffect(c.RunID, c.Fence, c.Key, &c.Result)
}

// Validate checks the run id.
func (p *RunEffectListParams) Validate() error { return validateRunID(p.RunID) }

// Validate checks the effect's identity and its optional JSON result.
func (p *RunTxParams) Validate() error { _, err := p.normalized(); return err }

// normalized returns a copy whose result is compact (nil when none).
func (p *RunTxParams) normalized() (*RunTxParams, error) {
	c := *p
	return &c, normalizeEffect(c.RunID, c.Fence, c.Key, &c.Result)
}

// Validate checks every event of the batch; one invalid event refuses it
// all, its index named.
func (p *RunEventAppendParams) Validate() error { _, err := p.normalized(); return err }

// normalized returns a copy whose payloads are compact; the caller's slice
// is not changed.
func (p *RunEventAppendParams) normalized() (*RunEventAppendParams, error) {
	evs := make([]RunEventInsert, len(p.Events))
	for i, ev := range p.Events {
		err := runs.ValidateFenced(ev.RunID, ev.Fence)
		if err == nil && ev.Seq <= 0 {
			err = &journal.InputError{Field: "seq", Problem: fmt.Sprintf("%d is not a sequence number (they start at 1)", ev.Seq)}
		}
		if err == nil {
			err = journal.ValidateID("kind", ev.Kind)
		}
		if err == nil {
			ev.Payload, err = runs.NormalizePayload("payload", ev.Payload)
		}
		if err != nil {
			return nil, inBatch("event", i, err)
		}
		evs[i] = ev
	}
	return &RunEventAppendParams{Events: evs}, nil
}

// Validate checks the run id, the cursor and the page size (0 means the
// driver's default).
func (p *RunEventListParams) Validate() error {
	if err := validateRunID(p.RunID); err != nil {
		return err
	}
	if p.AfterFence < 0 || p.AfterSeq < 0 {
		return &journal.InputError{Field: "after", Problem: fmt.Sprintf("(%d, %d) is below (0, 0)", p.AfterFence, p.AfterSeq)}
	}
	if p.Limit < 0 || p.Limit > MaxRunEventListLimit {
		return &journal.InputError{Field: "limit", Problem: fmt.Sprintf("%d is outside 0..%d", p.Limit, MaxRunEventListLimit)}
	}
	return nil
}
