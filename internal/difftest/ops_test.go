package difftest

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// step is one decoded operation with its arguments resolved: desc names it
// in a failure, run applies it to one store and returns its outcome
// normalized, or clock moves the shared store clock (once, for both).
type step struct {
	desc  string
	run   func(ctx context.Context, sd *side) string
	clock func(p *pair)
}

// decoder decodes one op kind. ref is the SQLite side, read to resolve
// "the current fence / epoch / position" choices into values that both
// stores are then given alike (they agree on them, or the sequence has
// failed already).
type decoder func(ctx context.Context, in *input, ref *side) step

// The op kinds, by the index of their decoder in ops (the seeds name them).
const (
	opRead = iota // first: the zero bytes a mutation inserts read
	opEnqueue
	opClaim
	opRenew
	opRenewMany
	opComplete
	opCompleteMany
	opFail
	opBlock
	opUnblock
	opCancel
	opReclaim
	opEffectBegin
	opEffectCommit
	opEffectResolve
	opRunTx
	opEmit
	opWorldCreate
	opAppend
	opGrant
	opLeaseRenew
	opHandoff
	opRevoke
	opSweep
	opImport
	opAdvance
	_ // opAdvance again: the clock moves often
)

// ops is every op kind; the first byte of an op chooses one.
var ops = []decoder{
	decodeRead, decodeEnqueue, decodeClaim, decodeRenew, decodeRenewMany, decodeComplete, decodeCompleteMany,
	decodeFail, decodeBlock, decodeUnblock, decodeCancel, decodeReclaim,
	decodeEffectBegin, decodeEffectCommit, decodeEffectResolve, decodeRunTx, decodeEmit,
	decodeWorldCreate, decodeAppend, decodeGrant, decodeLeaseRenew, decodeHandoff, decodeRevoke, decodeSweep,
	decodeImport, decodeAdvance, decodeAdvance,
}

// maxOps bounds one sequence, so one execution stays short.
const maxOps = 40

func decodeOp(ctx context.Context, in *input, ref *side) step {
	return ops[in.pick(len(ops))](ctx, in, ref)
}

// runSlot chooses a run: an even byte one a recent claim returned (if
// any), an odd one any run the sequence enqueued (slot k is 2k+1) or a
// hostile reference (an unknown, zero, negative or huge id).
func runSlot(in *input, ref *side) int {
	b := int(in.byte())
	if b%2 == 0 && len(ref.claimed) > 0 {
		return ref.claimed[(b/2)%len(ref.claimed)]
	}
	n := len(ref.ids)
	c := (b / 2) % (n + 4)
	if c < n {
		return c
	}
	return -(c - n + 1)
}

// fenceFor resolves a fence choice against the run as SQLite has it.
func fenceFor(ctx context.Context, in *input, ref *side, slot int) int64 {
	cur := int64(1)
	if r, err := ref.d.RunGet(ctx, &driver.RunGetParams{ID: ref.id(slot)}); err == nil {
		cur = r.Fence
	}
	return near(in, cur)
}

// headFor reads a world's head as SQLite has it (zero if none).
func headFor(ctx context.Context, ref *side, w string) driver.World {
	if h, err := ref.d.WorldGet(ctx, &driver.WorldGetParams{World: w}); err == nil {
		return *h
	}
	return driver.World{}
}

func decodeAdvance(_ context.Context, in *input, _ *side) step {
	d := from(in, advances)
	return step{desc: fmt.Sprintf("advance clock %s", d), clock: func(p *pair) {
		p.clock.Set(p.clock.Now().Add(d)) // Set, not Advance: d may be negative
	}}
}

// slotName prints a run reference in a step's description.
func slotName(slot int) string {
	if slot < 0 {
		return fmt.Sprintf("id(%d)", hostileIDs[(-slot-1)%len(hostileIDs)])
	}
	return fmt.Sprintf("#%d", slot)
}

func dur(d time.Duration) string { return d.String() }
