package drivertest

import (
	"bytes"
	"fmt"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/hostile"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

func totalValues() []hostileValue {
	var out []hostileValue
	for _, s := range hostile.BatchTotals() {
		out = append(out, hostileValue{s.Name, s.Value})
	}
	return out
}

// total builds the entries of the batch-payload corpus: v is the summed
// compact payload bytes of the call's batch (hostile.BatchPayloads).
func total(name string, prep func(x *hx, ps [][]byte) hostileCall) hostileEntry {
	return hostileEntry{name: name, kind: "total", values: totalValues, prepare: func(x *hx, v any) hostileCall {
		return prep(x, hostile.BatchPayloads(int(v.(int64))))
	}}
}

// batchEntries drive driver.MaxBatchPayloadBytes at and one past into the
// two calls it bounds. The world entry is round-tripped with the others.
func batchEntries() (runEntries, worldEntries []hostileEntry) {
	if hostile.MaxBatchPayloadBytes != driver.MaxBatchPayloadBytes {
		panic(fmt.Sprintf("internal/hostile's batch bound %d is not driver.MaxBatchPayloadBytes %d", hostile.MaxBatchPayloadBytes, driver.MaxBatchPayloadBytes))
	}
	runEntries = []hostileEntry{total("RunEnqueue.batch_payload_bytes", func(x *hx, ps [][]byte) hostileCall {
		es := make([]runs.Enqueue, len(ps))
		for i, p := range ps {
			es[i] = runs.Enqueue{Queue: x.queue(), Payload: p}
		}
		var got []driver.RunEnqueued
		return hostileCall{func() (err error) {
			got, err = x.runStore().RunEnqueue(x.ctx, &driver.RunEnqueueParams{Runs: es})
			return err
		}, func() error {
			if len(got) != len(ps) {
				return fmt.Errorf("%d runs enqueued of %d", len(got), len(ps))
			}
			for i, e := range got {
				r, err := x.runNow(e.Run.ID)
				if err != nil {
					return err
				}
				if !bytes.Equal(r.Payload, ps[i]) {
					return fmt.Errorf("run %d of the batch: payload of %d bytes, want %d", i, len(r.Payload), len(ps[i]))
				}
			}
			return nil
		}}
	})}
	worldEntries = []hostileEntry{total("JournalAppend.batch_payload_bytes", func(x *hx, ps [][]byte) hostileCall {
		x.create(x.world(), "h")
		reqs := make([]journal.AppendRequest, len(ps))
		for i, p := range ps {
			reqs[i] = journal.AppendRequest{Holder: "h", Epoch: 1, SeenPosition: 1, Kind: "note", Payload: p}
		}
		var out []journal.AppendOutcome
		return hostileCall{func() (err error) {
			out, err = x.d.JournalAppend(x.ctx, &driver.JournalAppendParams{World: x.world(), Requests: reqs})
			for _, o := range out {
				if err == nil {
					err = o.Err
				}
			}
			return err
		}, func() error {
			es := x.read(x.world())
			if len(es) != len(ps)+1 {
				return fmt.Errorf("%d entries, want %d", len(es), len(ps)+1)
			}
			for i, p := range ps {
				if !bytes.Equal(es[i+1].Payload, p) {
					return fmt.Errorf("append %d of the batch: payload of %d bytes, want %d", i, len(es[i+1].Payload), len(p))
				}
			}
			return nil
		}}
	})}
	return runEntries, worldEntries
}
