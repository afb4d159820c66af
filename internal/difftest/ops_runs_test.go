package difftest

import (
	"context"
	"fmt"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// The run ops: one decoder per RunStore method.

func decodeEnqueue(_ context.Context, in *input, _ *side) step {
	n := 1 + in.pick(3)
	es := make([]runs.Enqueue, n)
	for i := range es {
		es[i] = runs.Enqueue{Queue: from(in, queues), Payload: from(in, payloads), Priority: from(in, priorities),
			Delay: from(in, durations[2:]), MaxAttempts: from(in, attempts), UniqueKey: from(in, uniqueKeys)}
	}
	desc := "enqueue"
	for _, e := range es {
		desc += fmt.Sprintf(" {%q %s prio=%d delay=%s att=%d key=%q}", e.Queue, bs(e.Payload), e.Priority, e.Delay, e.MaxAttempts, e.UniqueKey)
	}
	return step{desc: desc, run: func(ctx context.Context, sd *side) string {
		out, err := sd.d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
		return sd.result(list(out, func(e driver.RunEnqueued) string {
			sd.slotOf(e.Run.ID)
			return fmt.Sprintf("%s existing=%t", sd.run(e.Run), e.Existing)
		}), err)
	}}
}

func decodeClaim(_ context.Context, in *input, _ *side) step {
	p := driver.RunClaimParams{Queue: from(in, queues), Owner: from(in, owners), Limit: from(in, limits), Lease: from(in, durations)}
	return step{desc: fmt.Sprintf("claim %+v", p), run: func(ctx context.Context, sd *side) string {
		q := p
		out, err := sd.d.RunClaim(ctx, &q)
		sd.noteClaimed(out)
		return sd.result(list(out, sd.run), err)
	}}
}

func decodeRenew(ctx context.Context, in *input, ref *side) step {
	slot := runSlot(in, ref)
	fence := fenceFor(ctx, in, ref, slot)
	owner, lease := from(in, owners), from(in, durations)
	return step{desc: fmt.Sprintf("renew %s fence=%d owner=%q lease=%s", slotName(slot), fence, owner, lease), run: func(ctx context.Context, sd *side) string {
		r, err := sd.d.RunRenew(ctx, &driver.RunRenewParams{ID: sd.id(slot), Fence: fence, Owner: owner, Lease: lease})
		return sd.result(sd.run(r), err)
	}}
}

// refs chooses 1..3 (slot, fence) pairs for a batch.
func refs(ctx context.Context, in *input, ref *side) ([]int, []int64, string) {
	n := 1 + in.pick(3)
	slots, fences := make([]int, n), make([]int64, n)
	desc := ""
	for i := range slots {
		slots[i] = runSlot(in, ref)
		fences[i] = fenceFor(ctx, in, ref, slots[i])
		desc += fmt.Sprintf(" %s@%d", slotName(slots[i]), fences[i])
	}
	return slots, fences, desc
}

func decodeRenewMany(ctx context.Context, in *input, ref *side) step {
	slots, fences, desc := refs(ctx, in, ref)
	owner, lease := from(in, owners), from(in, durations)
	return step{desc: fmt.Sprintf("renew many owner=%q lease=%s%s", owner, lease, desc), run: func(ctx context.Context, sd *side) string {
		p := &driver.RunRenewManyParams{Owner: owner, Lease: lease}
		for i, s := range slots {
			p.Runs = append(p.Runs, driver.RunLeaseRef{ID: sd.id(s), Fence: fences[i]})
		}
		out, err := sd.d.RunRenewMany(ctx, p)
		if err != nil {
			return sd.errOutcome(err)
		}
		return fmt.Sprintf("ok renewed=%s lost=%v", list(out.Renewed, sd.name), out.Lost)
	}}
}

func decodeComplete(ctx context.Context, in *input, ref *side) step {
	slot := runSlot(in, ref)
	fence := fenceFor(ctx, in, ref, slot)
	result := from(in, payloads)
	return step{desc: fmt.Sprintf("complete %s fence=%d result=%s", slotName(slot), fence, bs(result)), run: func(ctx context.Context, sd *side) string {
		r, err := sd.d.RunComplete(ctx, &driver.RunCompleteParams{ID: sd.id(slot), Fence: fence, Result: result})
		return sd.result(sd.run(r), err)
	}}
}

func decodeCompleteMany(ctx context.Context, in *input, ref *side) step {
	slots, fences, desc := refs(ctx, in, ref)
	results := make([][]byte, len(slots))
	for i := range results {
		results[i] = from(in, payloads)
		desc += " " + bs(results[i])
	}
	return step{desc: "complete many" + desc, run: func(ctx context.Context, sd *side) string {
		p := &driver.RunCompleteManyParams{}
		for i, s := range slots {
			p.Runs = append(p.Runs, driver.RunCompletion{ID: sd.id(s), Fence: fences[i], Result: results[i]})
		}
		out, err := sd.d.RunCompleteMany(ctx, p)
		if err != nil {
			return sd.errOutcome(err)
		}
		return fmt.Sprintf("ok completed=%s fenced=%v", list(out.Completed, sd.name), out.Fenced)
	}}
}

func decodeFail(ctx context.Context, in *input, ref *side) step {
	slot := runSlot(in, ref)
	fence := fenceFor(ctx, in, ref, slot)
	reason, retry := from(in, reasons), from(in, durations)
	return step{desc: fmt.Sprintf("fail %s fence=%d reason=%s retry=%s", slotName(slot), fence, bs([]byte(reason)), retry), run: func(ctx context.Context, sd *side) string {
		r, err := sd.d.RunFail(ctx, &driver.RunFailParams{ID: sd.id(slot), Fence: fence, Reason: reason, RetryAfter: retry})
		return sd.result(sd.run(r), err)
	}}
}

func decodeBlock(ctx context.Context, in *input, ref *side) step {
	slot := runSlot(in, ref)
	fence := fenceFor(ctx, in, ref, slot)
	reason := from(in, reasons)
	return step{desc: fmt.Sprintf("block %s fence=%d reason=%s", slotName(slot), fence, bs([]byte(reason))), run: func(ctx context.Context, sd *side) string {
		r, err := sd.d.RunBlock(ctx, &driver.RunBlockParams{ID: sd.id(slot), Fence: fence, Reason: reason})
		return sd.result(sd.run(r), err)
	}}
}

func decodeUnblock(_ context.Context, in *input, ref *side) step {
	slot := runSlot(in, ref)
	return step{desc: fmt.Sprintf("unblock %s", slotName(slot)), run: func(ctx context.Context, sd *side) string {
		r, err := sd.d.RunUnblock(ctx, &driver.RunUnblockParams{ID: sd.id(slot)})
		return sd.result(sd.run(r), err)
	}}
}

func decodeCancel(_ context.Context, in *input, ref *side) step {
	slot := runSlot(in, ref)
	reason := from(in, reasons)
	return step{desc: fmt.Sprintf("cancel %s reason=%s", slotName(slot), bs([]byte(reason))), run: func(ctx context.Context, sd *side) string {
		r, err := sd.d.RunCancel(ctx, &driver.RunCancelParams{ID: sd.id(slot), Reason: reason})
		return sd.result(sd.run(r), err)
	}}
}

func decodeReclaim(_ context.Context, in *input, _ *side) step {
	limit := from(in, limits)
	return step{desc: fmt.Sprintf("reclaim limit=%d", limit), run: func(ctx context.Context, sd *side) string {
		out, err := sd.d.RunReclaim(ctx, &driver.RunReclaimParams{Limit: limit})
		if err != nil {
			return sd.errOutcome(err)
		}
		return "ok " + list(out.Reclaimed, sd.run)
	}}
}
