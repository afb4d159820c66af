package driver

import (
	"context"
	"errors"
	"fmt"

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

// checked validates p and, if it is valid, makes the call.
func checked[P interface{ Validate() error }, R any](ctx context.Context, p P, call func(context.Context, P) (R, error)) (R, error) {
	if err := p.Validate(); err != nil {
		var none R
		return none, err
	}
	return call(ctx, p)
}

// normalizedCall validates p and makes the call with its normalized copy.
func normalizedCall[P interface{ normalized() (P, error) }, R any](ctx context.Context, p P, call func(context.Context, P) (R, error)) (R, error) {
	n, err := p.normalized()
	if err != nil {
		var none R
		return none, err
	}
	return call(ctx, n)
}

// SchemaErrors is implemented by a store that can tell an error caused by
// a missing or older schema (SQLite's "no such table", Postgres's SQLSTATE
// 42P01 and 42883) from others. Validating then answers such an error with
// ErrNotMigrated, so a driver used on a store nobody migrated fails typed
// on every call, not only where a client checks at open (SchemaCheck).
type SchemaErrors interface {
	MissingSchema(err error) bool
}

// typed maps an error of a missing schema to ErrNotMigrated (keeping the
// store's own error in the chain, for its detail).
func (v validating) typed(err error) error {
	if err == nil || errors.Is(err, ErrNotMigrated) {
		return err
	}
	if c, ok := v.Driver.(SchemaErrors); ok && c.MissingSchema(err) {
		return fmt.Errorf("%w: %w", ErrNotMigrated, err)
	}
	return err
}

// typed wraps call so that its error goes through v.typed.
func typed[P, R any](v validating, call func(context.Context, P) (R, error)) func(context.Context, P) (R, error) {
	return func(ctx context.Context, p P) (R, error) {
		ctx, span := traceWrite(ctx, p) // tracing.go: only inside a traced call
		r, err := call(ctx, p)
		err = v.typed(err)
		endTrace(span, err)
		return r, err
	}
}

// validating applies the rules; the methods it does not define (Name,
// Settings, Migrate, StoreNow, Close) take no input and pass through.
type validating struct{ Driver }

func (v validating) WorldCreate(ctx context.Context, p *WorldCreateParams) (*World, error) {
	return normalizedCall(ctx, p, typed(v, v.Driver.WorldCreate))
}

func (v validating) WorldGet(ctx context.Context, p *WorldGetParams) (*World, error) {
	return checked(ctx, p, typed(v, v.Driver.WorldGet))
}

func (v validating) WorldList(ctx context.Context, p *WorldListParams) ([]*World, error) {
	return normalizedCall(ctx, p, typed(v, v.Driver.WorldList))
}

func (v validating) LeaseChange(ctx context.Context, p *LeaseChangeParams) (*World, error) {
	return checked(ctx, p, typed(v, v.Driver.LeaseChange))
}

func (v validating) LeaseScanExpired(ctx context.Context, p *LeaseScanParams) ([]ExpiredWorld, error) {
	return normalizedCall(ctx, p, typed(v, v.Driver.LeaseScanExpired))
}

func (v validating) HomeJoin(ctx context.Context, p *HomeJoinParams) (*HomeReplica, error) {
	return normalizedCall(ctx, p, typed(v, v.Driver.HomeJoin))
}

func (v validating) HomeLeave(ctx context.Context, p *HomeLeaveParams) error {
	_, err := checked(ctx, p, typed(v, func(ctx context.Context, p *HomeLeaveParams) (struct{}, error) {
		return struct{}{}, v.Driver.HomeLeave(ctx, p)
	}))
	return err
}

func (v validating) HomeLive(ctx context.Context, p *HomeLiveParams) ([]HomeReplica, error) {
	return checked(ctx, p, typed(v, v.Driver.HomeLive))
}

// JournalAppend refuses a bad request in its own outcome, never its
// neighbours: only the valid requests go down, and their outcomes are put
// back at their indexes.
func (v validating) JournalAppend(ctx context.Context, p *JournalAppendParams) ([]journal.AppendOutcome, error) {
	if err := journal.ValidateID("world", p.World); err != nil {
		return nil, err
	}
	valid, idx, out, err := p.normalized() // the batch bound too (validate.go)
	if err != nil {
		return nil, err
	}
	if len(valid.Requests) == 0 {
		return out, nil
	}
	got, err := v.Driver.JournalAppend(ctx, valid)
	if err != nil {
		return nil, v.typed(err)
	}
	for k, o := range got {
		out[idx[k]] = o
	}
	return out, nil
}

func (v validating) JournalRead(ctx context.Context, p *JournalReadParams) ([]journal.Entry, error) {
	return normalizedCall(ctx, p, typed(v, v.Driver.JournalRead))
}

func (v validating) JournalImport(ctx context.Context, p *JournalImportParams) (*World, error) {
	return checked(ctx, p, typed(v, v.Driver.JournalImport))
}

// RunEnqueue answers an empty batch itself, the same on every store.
func (v validating) RunEnqueue(ctx context.Context, p *RunEnqueueParams) ([]RunEnqueued, error) {
	n, err := p.normalized()
	if err != nil {
		return nil, err
	}
	// The batch bound (validate.go), on the normalized payloads.
	if err := checkBatchPayload("runs", len(n.Runs), func(i int) int { return len(n.Runs[i].Payload) }); err != nil {
		return nil, err
	}
	if len(n.Runs) == 0 {
		return []RunEnqueued{}, nil
	}
	return typed(v, v.Driver.RunEnqueue)(ctx, n)
}

// RunEnqueueTx goes down even with an empty batch: only the driver can
// tell whether the transaction is of its kind, and a wrong one is refused
// the same whatever the batch holds.
func (v validating) RunEnqueueTx(ctx context.Context, p *RunEnqueueTxParams) ([]RunEnqueued, error) {
	n, err := p.normalized()
	if err != nil {
		return nil, err
	}
	if err := checkBatchPayload("runs", len(n.Runs), func(i int) int { return len(n.Runs[i].Payload) }); err != nil {
		return nil, err
	}
	return typed(v, v.Driver.RunEnqueueTx)(ctx, n)
}

func (v validating) RunGet(ctx context.Context, p *RunGetParams) (*Run, error) {
	return checked(ctx, p, typed(v, v.Driver.RunGet))
}

func (v validating) RunList(ctx context.Context, p *RunListParams) ([]*Run, error) {
	return checked(ctx, p, typed(v, v.Driver.RunList))
}

// RunCounts has no input to check.
func (v validating) RunCounts(ctx context.Context) ([]RunCount, error) {
	return v.Driver.RunCounts(ctx)
}

func (v validating) RunClaim(ctx context.Context, p *RunClaimParams) ([]*Run, error) {
	return checked(ctx, p, typed(v, v.Driver.RunClaim))
}

func (v validating) RunRenew(ctx context.Context, p *RunRenewParams) (*Run, error) {
	return checked(ctx, p, typed(v, v.Driver.RunRenew))
}

func (v validating) RunRenewMany(ctx context.Context, p *RunRenewManyParams) (*RunRenewManyResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(p.Runs) == 0 {
		return &RunRenewManyResult{}, nil
	}
	return typed(v, v.Driver.RunRenewMany)(ctx, p)
}

func (v validating) RunComplete(ctx context.Context, p *RunCompleteParams) (*Run, error) {
	return normalizedCall(ctx, p, typed(v, v.Driver.RunComplete))
}

func (v validating) RunCompleteMany(ctx context.Context, p *RunCompleteManyParams) (*RunCompleteManyResult, error) {
	n, err := p.normalized()
	if err != nil {
		return nil, err
	}
	if len(n.Runs) == 0 {
		return &RunCompleteManyResult{}, nil
	}
	return typed(v, v.Driver.RunCompleteMany)(ctx, n)
}

func (v validating) RunFail(ctx context.Context, p *RunFailParams) (*Run, error) {
	return checked(ctx, p, typed(v, v.Driver.RunFail))
}

func (v validating) RunSnooze(ctx context.Context, p *RunSnoozeParams) (*Run, error) {
	return checked(ctx, p, typed(v, v.Driver.RunSnooze))
}

func (v validating) RunBlock(ctx context.Context, p *RunBlockParams) (*Run, error) {
	return checked(ctx, p, typed(v, v.Driver.RunBlock))
}

func (v validating) RunUnblock(ctx context.Context, p *RunUnblockParams) (*Run, error) {
	return checked(ctx, p, typed(v, v.Driver.RunUnblock))
}

func (v validating) RunCancel(ctx context.Context, p *RunCancelParams) (*Run, error) {
	return checked(ctx, p, typed(v, v.Driver.RunCancel))
}

func (v validating) RunReclaim(ctx context.Context, p *RunReclaimParams) (*RunReclaimResult, error) {
	return normalizedCall(ctx, p, typed(v, v.Driver.RunReclaim))
}

func (v validating) RunRelease(ctx context.Context, p *RunReleaseParams) (*Run, error) {
	return checked(ctx, p, typed(v, v.Driver.RunRelease))
}

func (v validating) RunDeleteFinished(ctx context.Context, p *RunDeleteFinishedParams) (*RunDeleteFinishedResult, error) {
	return checked(ctx, p, typed(v, v.Driver.RunDeleteFinished))
}

func (v validating) RunEffectBegin(ctx context.Context, p *RunEffectParams) (*Effect, error) {
	return checked(ctx, p, typed(v, v.Driver.RunEffectBegin))
}

func (v validating) RunEffectCommit(ctx context.Context, p *RunEffectCommitParams) (*Effect, error) {
	return normalizedCall(ctx, p, typed(v, v.Driver.RunEffectCommit))
}

func (v validating) RunEffectResolve(ctx context.Context, p *RunEffectResolveParams) (*Effect, error) {
	return normalizedCall(ctx, p, typed(v, v.Driver.RunEffectResolve))
}

func (v validating) RunEffectList(ctx context.Context, p *RunEffectListParams) ([]*Effect, error) {
	return checked(ctx, p, typed(v, v.Driver.RunEffectList))
}

func (v validating) RunTx(ctx context.Context, p *RunTxParams, fn func(tx any) error) (*RunTxResult, error) {
	n, err := p.normalized()
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, &journal.InputError{Field: "fn", Problem: "a transactional effect needs a function"}
	}
	// Not typed: fn runs the caller's own SQL, whose missing table is
	// theirs, not a schema `leasehold migrate` would create.
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
	return typed(v, v.Driver.RunEventAppend)(ctx, n)
}

func (v validating) RunEventList(ctx context.Context, p *RunEventListParams) ([]*RunEvent, error) {
	return normalizedCall(ctx, p, typed(v, v.Driver.RunEventList))
}

func (v validating) NodeKeyRegister(ctx context.Context, p *NodeKeyRegisterParams) (*NodeKey, error) {
	return checked(ctx, p, typed(v, v.Driver.NodeKeyRegister))
}

func (v validating) NodeKeyGet(ctx context.Context, p *NodeKeyGetParams) (*NodeKey, error) {
	return checked(ctx, p, typed(v, v.Driver.NodeKeyGet))
}

func (v validating) WorldRenewMany(ctx context.Context, p *WorldRenewManyParams) ([]WorldRenewOutcome, error) {
	return checked(ctx, p, typed(v, v.Driver.WorldRenewMany))
}

func (v validating) TokenCreate(ctx context.Context, p *TokenCreateParams) (*Token, error) {
	return checked(ctx, p, typed(v, v.Driver.TokenCreate))
}

func (v validating) TokenGet(ctx context.Context, p *TokenGetParams) (*Token, error) {
	return checked(ctx, p, typed(v, v.Driver.TokenGet))
}

func (v validating) TokenList(ctx context.Context, p *TokenListParams) ([]*Token, error) {
	return checked(ctx, p, typed(v, v.Driver.TokenList))
}

func (v validating) TokenRevoke(ctx context.Context, p *TokenRevokeParams) (*Token, error) {
	return checked(ctx, p, typed(v, v.Driver.TokenRevoke))
}

func (v validating) WorldSnapshotPut(ctx context.Context, p *WorldSnapshotPutParams) error {
	_, err := checked(ctx, p, typed(v, func(ctx context.Context, p *WorldSnapshotPutParams) (struct{}, error) {
		return struct{}{}, v.Driver.WorldSnapshotPut(ctx, p)
	}))
	return err
}

func (v validating) WorldSnapshotGet(ctx context.Context, p *WorldSnapshotGetParams) (*WorldSnapshot, error) {
	return checked(ctx, p, typed(v, v.Driver.WorldSnapshotGet))
}
