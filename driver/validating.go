package driver

import (
	"context"

	"github.com/leasehold/leasehold/journal"
)

// Validating returns d behind the input rules of its params (validate*.go):
// every call is checked, and its JSON normalized to compact form, before d
// sees it, so a refused input reaches no store and both stores refuse it
// with the same *journal.InputError (ErrInvalid). The caller's params are
// never changed: a normalized call goes down as a copy.
//
// sqlite.Open and postgres.Open return their driver already behind it (see
// doc.go), so a driver implementation may assume valid, normalized input
// and hold only SQL and error mapping. Wrapping twice is harmless: an
// already validating driver is returned as it is.
//
// Optional interfaces (EventNotifier, PoolReporter) of d are not forwarded;
// a driver package that has them defines them on its own exported type.
func Validating(d Driver) Driver {
	if v, ok := d.(validating); ok {
		return v
	}
	return validating{d}
}

// validating applies the rules; the methods it does not define (Name,
// Settings, Migrate, StoreNow, Close) take no input and pass through.
type validating struct{ Driver }

func (v validating) WorldCreate(ctx context.Context, p *WorldCreateParams) (*World, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return v.Driver.WorldCreate(ctx, p)
}

func (v validating) WorldGet(ctx context.Context, p *WorldGetParams) (*World, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return v.Driver.WorldGet(ctx, p)
}

func (v validating) WorldList(ctx context.Context, p *WorldListParams) ([]*World, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q := *p
	q.Limit = orDefault(p.Limit, DefaultWorldListLimit)
	return v.Driver.WorldList(ctx, &q)
}

func (v validating) LeaseChange(ctx context.Context, p *LeaseChangeParams) (*World, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return v.Driver.LeaseChange(ctx, p)
}

func (v validating) LeaseScanExpired(ctx context.Context, p *LeaseScanParams) ([]ExpiredWorld, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q := *p
	q.Limit = orDefault(p.Limit, DefaultLeaseScanBatch)
	return v.Driver.LeaseScanExpired(ctx, &q)
}

// JournalAppend refuses a bad request in its own outcome, never its
// neighbours: only the valid requests go down, and their outcomes are put
// back at their indexes.
func (v validating) JournalAppend(ctx context.Context, p *JournalAppendParams) ([]journal.AppendOutcome, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	valid, idx, out := p.normalized()
	if len(valid.Requests) == 0 {
		return out, nil
	}
	got, err := v.Driver.JournalAppend(ctx, valid)
	if err != nil {
		return nil, err
	}
	for k, o := range got {
		out[idx[k]] = o
	}
	return out, nil
}

func (v validating) JournalRead(ctx context.Context, p *JournalReadParams) ([]journal.Entry, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q := *p
	q.Limit = orDefault(p.Limit, DefaultJournalReadLimit)
	return v.Driver.JournalRead(ctx, &q)
}

func (v validating) JournalImport(ctx context.Context, p *JournalImportParams) (*World, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return v.Driver.JournalImport(ctx, p)
}

// RunEnqueue answers an empty batch itself, the same on every store.
func (v validating) RunEnqueue(ctx context.Context, p *RunEnqueueParams) ([]RunEnqueued, error) {
	n, err := p.normalized()
	if err != nil {
		return nil, err
	}
	if len(n.Runs) == 0 {
		return []RunEnqueued{}, nil
	}
	return v.Driver.RunEnqueue(ctx, n)
}

func (v validating) RunGet(ctx context.Context, p *RunGetParams) (*Run, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return v.Driver.RunGet(ctx, p)
}

func (v validating) RunClaim(ctx context.Context, p *RunClaimParams) ([]*Run, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return v.Driver.RunClaim(ctx, p)
}

func (v validating) RunRenew(ctx context.Context, p *RunRenewParams) (*Run, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return v.Driver.RunRenew(ctx, p)
}

func (v validating) RunRenewMany(ctx context.Context, p *RunRenewManyParams) (*RunRenewManyResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(p.Runs) == 0 {
		return &RunRenewManyResult{}, nil
	}
	return v.Driver.RunRenewMany(ctx, p)
}

func (v validating) RunComplete(ctx context.Context, p *RunCompleteParams) (*Run, error) {
	n, err := p.normalized()
	if err != nil {
		return nil, err
	}
	return v.Driver.RunComplete(ctx, n)
}

func (v validating) RunCompleteMany(ctx context.Context, p *RunCompleteManyParams) (*RunCompleteManyResult, error) {
	n, err := p.normalized()
	if err != nil {
		return nil, err
	}
	if len(n.Runs) == 0 {
		return &RunCompleteManyResult{}, nil
	}
	return v.Driver.RunCompleteMany(ctx, n)
}

func (v validating) RunFail(ctx context.Context, p *RunFailParams) (*Run, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return v.Driver.RunFail(ctx, p)
}

func (v validating) RunBlock(ctx context.Context, p *RunBlockParams) (*Run, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return v.Driver.RunBlock(ctx, p)
}

func (v validating) RunUnblock(ctx context.Context, p *RunUnblockParams) (*Run, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return v.Driver.RunUnblock(ctx, p)
}

func (v validating) RunCancel(ctx context.Context, p *RunCancelParams) (*Run, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return v.Driver.RunCancel(ctx, p)
}

func (v validating) RunReclaim(ctx context.Context, p *RunReclaimParams) (*RunReclaimResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q := *p
	q.Limit = orDefault(p.Limit, DefaultRunReclaimBatch)
	return v.Driver.RunReclaim(ctx, &q)
}

func (v validating) RunEffectBegin(ctx context.Context, p *RunEffectParams) (*Effect, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return v.Driver.RunEffectBegin(ctx, p)
}

func (v validating) RunEffectCommit(ctx context.Context, p *RunEffectCommitParams) (*Effect, error) {
	n, err := p.normalized()
	if err != nil {
		return nil, err
	}
	return v.Driver.RunEffectCommit(ctx, n)
}

func (v validating) RunEffectResolve(ctx context.Context, p *RunEffectResolveParams) (*Effect, error) {
	n, err := p.normalized()
	if err != nil {
		return nil, err
	}
	return v.Driver.RunEffectResolve(ctx, n)
}

func (v validating) RunEffectList(ctx context.Context, p *RunEffectListParams) ([]*Effect, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return v.Driver.RunEffectList(ctx, p)
}

func (v validating) RunTx(ctx context.Context, p *RunTxParams, fn func(tx any) error) (*RunTxResult, error) {
	n, err := p.normalized()
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, &journal.InputError{Field: "fn", Problem: "a transactional effect needs a function"}
	}
	return v.Driver.RunTx(ctx, n, fn)
}

func (v validating) RunEventAppend(ctx context.Context, p *RunEventAppendParams) (*RunEventAppendResult, error) {
	n, err := p.normalized()
	if err != nil {
		return nil, err
	}
	if len(n.Events) == 0 {
		return &RunEventAppendResult{}, nil
	}
	return v.Driver.RunEventAppend(ctx, n)
}

func (v validating) RunEventList(ctx context.Context, p *RunEventListParams) ([]*RunEvent, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q := *p
	q.Limit = orDefault(p.Limit, DefaultRunEventListLimit)
	return v.Driver.RunEventList(ctx, &q)
}
