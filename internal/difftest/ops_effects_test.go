package difftest

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/leasehold/driver"
)

// The effect ops: one decoder per EffectStore write.

func decodeEffectBegin(ctx context.Context, in *input, ref *side) step {
	slot := runSlot(in, ref)
	fence := fenceFor(ctx, in, ref, slot)
	key := from(in, keys)
	return step{desc: fmt.Sprintf("effect begin %s fence=%d key=%q", slotName(slot), fence, key), run: func(ctx context.Context, sd *side) string {
		e, err := sd.d.RunEffectBegin(ctx, &driver.RunEffectParams{RunID: sd.id(slot), Fence: fence, Key: key})
		return sd.result(sd.effect(e), err)
	}}
}

func decodeEffectCommit(ctx context.Context, in *input, ref *side) step {
	slot := runSlot(in, ref)
	fence := fenceFor(ctx, in, ref, slot)
	key, result := from(in, keys), from(in, payloads)
	return step{desc: fmt.Sprintf("effect commit %s fence=%d key=%q result=%s", slotName(slot), fence, key, bs(result)), run: func(ctx context.Context, sd *side) string {
		e, err := sd.d.RunEffectCommit(ctx, &driver.RunEffectCommitParams{RunID: sd.id(slot), Fence: fence, Key: key, Result: result})
		return sd.result(sd.effect(e), err)
	}}
}

func decodeEffectResolve(ctx context.Context, in *input, ref *side) step {
	slot := runSlot(in, ref)
	fence := fenceFor(ctx, in, ref, slot)
	key, committed, result := from(in, keys), in.pick(2) == 0, from(in, payloads)
	return step{desc: fmt.Sprintf("effect resolve %s fence=%d key=%q committed=%t result=%s", slotName(slot), fence, key, committed, bs(result)),
		run: func(ctx context.Context, sd *side) string {
			e, err := sd.d.RunEffectResolve(ctx, &driver.RunEffectResolveParams{RunID: sd.id(slot), Fence: fence, Key: key,
				Committed: committed, Result: result})
			return sd.result(sd.effect(e), err)
		}}
}

// txBodies are what a RunTx function does inside the transaction: its own
// write (the common case), nothing, fail, or write the run's own row —
// benignly, or releasing the run or moving its fence under the very
// transaction that commits the effect. %[1]d is the run's id, %[2]d its
// slot (what the read-back of the caller's table compares).
var txBodies = []struct{ name, sql string }{
	{"insert own row", "INSERT INTO " + txTable + " (run_id, note) VALUES (%[2]d, 'tx')"},
	{"nothing", ""},
	{"fail", ""},
	{"touch run reason", "UPDATE runs SET reason = 'tx' WHERE id = %[1]d"},
	{"release run", "UPDATE runs SET state = 'available', owner = '', expires_at = NULL WHERE id = %[1]d"},
	{"bump run fence", "UPDATE runs SET fence = fence + 1 WHERE id = %[1]d"},
}

func decodeRunTx(ctx context.Context, in *input, ref *side) step {
	slot := runSlot(in, ref)
	fence := fenceFor(ctx, in, ref, slot)
	key, result := from(in, keys), from(in, payloads)
	body := from(in, txBodies)
	return step{desc: fmt.Sprintf("tx %s fence=%d key=%q result=%s fn=%s", slotName(slot), fence, key, bs(result), body.name),
		run: func(ctx context.Context, sd *side) string {
			called := false
			fn := func(tx any) error {
				called = true
				if body.name == "fail" {
					return errFn
				}
				if body.sql == "" {
					return nil
				}
				q := fmt.Sprintf(body.sql, sd.id(slot), slot)
				switch tx := tx.(type) {
				case *sql.Tx:
					_, err := tx.ExecContext(ctx, q)
					return err
				case pgx.Tx:
					_, err := tx.Exec(ctx, q)
					return err
				}
				return fmt.Errorf("difftest: a tx of type %T", tx)
			}
			r, err := sd.d.RunTx(ctx, &driver.RunTxParams{RunID: sd.id(slot), Fence: fence, Key: key, Result: result}, fn)
			if err != nil {
				return fmt.Sprintf("called=%t %s", called, sd.errOutcome(err))
			}
			return fmt.Sprintf("ok called=%t done=%t %s", called, r.Done, sd.effect(r.Effect))
		}}
}

func decodeEmit(ctx context.Context, in *input, ref *side) step {
	slots, fences, desc := refs(ctx, in, ref)
	seqs, ks, ps := make([]int64, len(slots)), make([]string, len(slots)), make([][]byte, len(slots))
	for i := range slots {
		seqs[i] = near(in, 1+int64(in.pick(3)))
		ks[i], ps[i] = from(in, kinds), from(in, payloads)
		desc += fmt.Sprintf(" seq=%d %q %s", seqs[i], ks[i], bs(ps[i]))
	}
	return step{desc: "emit" + desc, run: func(ctx context.Context, sd *side) string {
		p := &driver.RunEventAppendParams{}
		for i, s := range slots {
			p.Events = append(p.Events, driver.RunEventInsert{RunID: sd.id(s), Fence: fences[i], Seq: seqs[i], Kind: ks[i], Payload: ps[i]})
		}
		out, err := sd.d.RunEventAppend(ctx, p)
		if err != nil {
			return sd.errOutcome(err)
		}
		return fmt.Sprintf("ok fenced=%v", out.Fenced)
	}}
}
