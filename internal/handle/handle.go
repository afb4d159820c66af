// Package handle lets a worker other than the in-process one hand a
// handler the same *leasehold.RunHandle: the remote worker (package
// remote) implements Ops over the HTTP API, and the root package, which
// owns RunHandle, registers the constructor here at init. So a handler
// written for leasehold.Worker runs unchanged under remote.Worker.
package handle

import (
	"context"
	"time"

	"github.com/leasehold/leasehold/internal/scheduler"
)

// Ops are the operations a RunHandle forwards to: *scheduler.Run in
// process, the remote worker's run over HTTP.
type Ops interface {
	Context() context.Context
	SetResult(result []byte) error
	Gate(ctx context.Context, maxDur time.Duration) error
	Effect(ctx context.Context, key string, maxDur time.Duration,
		fn func(ctx context.Context, tok scheduler.EffectToken) ([]byte, error)) ([]byte, error)
	ResolveEffect(ctx context.Context, key string, happened bool, result []byte) error
	Tx(ctx context.Context, key string, fn func(tx any) error) error
	Emit(ctx context.Context, kind string, payload []byte) error
	Step(ctx context.Context) error
}

// Run is a held run's identity, as a RunHandle shows it.
type Run struct {
	ID      int64
	Queue   string
	Payload []byte
	Attempt int
	Fence   int64
}

// New builds a *leasehold.RunHandle (as any: this package cannot name the
// type) over ops. Set by package leasehold at init.
var New func(r Run, ops Ops) any
