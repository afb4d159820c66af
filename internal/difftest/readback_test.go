package difftest

import (
	"bytes"
	"context"
	"fmt"
	"math"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// decodeRead is one read with arguments from the pools: reads take hostile
// ranges and cursors too.
func decodeRead(_ context.Context, in *input, ref *side) step {
	slot := runSlot(in, ref)
	w := from(in, worlds)
	n1, n2, limit := int64(from(in, ints)), int64(from(in, ints)), from(in, ints)
	switch in.pick(6) {
	case 0:
		return step{desc: fmt.Sprintf("get %s", slotName(slot)), run: func(ctx context.Context, sd *side) string {
			r, err := sd.d.RunGet(ctx, &driver.RunGetParams{ID: sd.id(slot)})
			return sd.result(sd.run(r), err)
		}}
	case 1:
		return step{desc: fmt.Sprintf("effects of %s", slotName(slot)), run: func(ctx context.Context, sd *side) string {
			es, err := sd.d.RunEffectList(ctx, &driver.RunEffectListParams{RunID: sd.id(slot)})
			return sd.result(list(es, sd.effect), err)
		}}
	case 2:
		return step{desc: fmt.Sprintf("events of %s after (%d, %d) limit %d", slotName(slot), n1, n2, limit), run: func(ctx context.Context, sd *side) string {
			es, err := sd.d.RunEventList(ctx, &driver.RunEventListParams{RunID: sd.id(slot), AfterFence: n1, AfterSeq: n2, Limit: limit})
			return sd.result(list(es, sd.event), err)
		}}
	case 3:
		return step{desc: fmt.Sprintf("journal %q from %d limit %d", w, n1, limit), run: func(ctx context.Context, sd *side) string {
			es, err := sd.d.JournalRead(ctx, &driver.JournalReadParams{World: w, From: n1, Limit: limit})
			return sd.result(list(es, func(e journal.Entry) string { return entry(&e) }), err)
		}}
	case 4:
		return step{desc: fmt.Sprintf("worlds after %q limit %d", w, limit), run: func(ctx context.Context, sd *side) string {
			ws, err := sd.d.WorldList(ctx, &driver.WorldListParams{After: w, Limit: limit})
			return sd.result(list(ws, world), err)
		}}
	default:
		return step{desc: fmt.Sprintf("get world %q", w), run: func(ctx context.Context, sd *side) string {
			got, err := sd.d.WorldGet(ctx, &driver.WorldGetParams{World: w})
			return sd.result(world(got), err)
		}}
	}
}

// readback is the whole state of a store, one line per fact: every run the
// sequence saw with its effects and events, every world with its journal
// and its JSONL export, the expiry scan, and the rows RunTx functions
// wrote to the caller's table.
func readback(ctx context.Context, sd *side) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for slot := range len(sd.ids) {
		id := sd.ids[slot]
		r, err := sd.d.RunGet(ctx, &driver.RunGetParams{ID: id})
		add("run #%d: %s", slot, sd.result(sd.run(r), err))
		es, err := sd.d.RunEffectList(ctx, &driver.RunEffectListParams{RunID: id})
		add("effects #%d: %s", slot, sd.result(list(es, sd.effect), err))
		evs, err := sd.d.RunEventList(ctx, &driver.RunEventListParams{RunID: id, Limit: 1000})
		add("events #%d: %s", slot, sd.result(list(evs, sd.event), err))
	}
	ws, err := sd.d.WorldList(ctx, &driver.WorldListParams{Limit: 1000})
	add("worlds: %s", sd.result(list(ws, world), err))
	for _, w := range ws {
		es, err := sd.d.JournalRead(ctx, &driver.JournalReadParams{World: w.World, From: 1, Limit: 1000})
		if err != nil {
			add("journal %q: %s", w.World, sd.errOutcome(err))
			continue
		}
		for i := range es {
			add("journal %q: %s", w.World, entry(&es[i]))
		}
		var buf bytes.Buffer
		jw := journal.NewWriter(&buf)
		for i := range es {
			if err := jw.Write(&es[i]); err != nil {
				add("export %q: %s", w.World, sd.errOutcome(err))
			}
		}
		if err := jw.Close(); err != nil {
			add("export %q: %s", w.World, sd.errOutcome(err))
		}
		add("export %q: %q", w.World, buf.String())
		if rep := journal.Audit(es); !rep.OK() || !rep.Final.Equal(w.State) {
			add("audit %q: violation %v, fold %s, head %s", w.World, rep.Violation, rep.Final, w.State)
		}
	}
	scan, err := sd.d.LeaseScanExpired(ctx, &driver.LeaseScanParams{Limit: math.MaxInt32})
	add("expired: %s", sd.result(list(scan, expired), err))
	var n int64
	var rows string
	err = sd.query(ctx, "SELECT count(*), coalesce(string_agg(run_id || ':' || note, ','), '') FROM (SELECT run_id, note FROM "+txTable+" ORDER BY run_id, note) t", &n, &rows)
	add("caller's table: %d %q %s", n, rows, sd.errOutcome(err))
	return out
}
