package drivertest

import (
	"fmt"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// str and js build the entries of the string and JSON corpora.
func str(name string, prep func(x *hx, v string) hostileCall) hostileEntry {
	return hostileEntry{name: name, kind: "string", values: stringValues, prepare: func(x *hx, v any) hostileCall { return prep(x, v.(string)) }}
}

func js(name string, prep func(x *hx, v []byte) hostileCall) hostileEntry {
	return hostileEntry{name: name, kind: "json", values: jsonValues, prepare: func(x *hx, v any) hostileCall { return prep(x, v.([]byte)) }}
}

// effectKey is the effect of r under key k, read back.
func (x *hx) effectKey(r *driver.Run, k string) (*driver.Effect, error) {
	effs, err := x.effects().RunEffectList(x.ctx, &driver.RunEffectListParams{RunID: r.ID})
	if err != nil {
		return nil, err
	}
	for _, e := range effs {
		if e.Key == k {
			return e, nil
		}
	}
	return nil, fmt.Errorf("no effect with key %q among %d", clip([]byte(k)), len(effs))
}

func runStringEntries() []hostileEntry {
	rs := func(x *hx) driver.RunStore { return x.runStore() }
	return []hostileEntry{
		str("RunEnqueue.queue", func(x *hx, v string) hostileCall {
			var got []driver.RunEnqueued
			return hostileCall{func() (err error) {
				got, err = rs(x).RunEnqueue(x.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: v}}})
				return err
			}, func() error {
				r, err := x.runNow(got[0].Run.ID)
				if err != nil {
					return err
				}
				return sameString("queue", r.Queue, v)
			}}
		}),
		str("RunEnqueue.unique_key", func(x *hx, v string) hostileCall {
			var got []driver.RunEnqueued
			return hostileCall{func() (err error) {
				got, err = rs(x).RunEnqueue(x.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", UniqueKey: v}}})
				return err
			}, func() error {
				r, err := x.runNow(got[0].Run.ID)
				if err != nil {
					return err
				}
				if err := sameString("unique key", r.UniqueKey, v); err != nil || v == "" {
					return err
				}
				again, err := rs(x).RunEnqueue(x.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", UniqueKey: v}}})
				if err != nil {
					return fmt.Errorf("enqueue again: %w", err)
				}
				if !again[0].Existing || again[0].Run.ID != r.ID {
					return fmt.Errorf("a second enqueue of the key is not the first run")
				}
				return nil
			}}
		}),
		str("RunEventListQueue.queue", func(x *hx, v string) hostileCall {
			return readOnly(func() error {
				return ignore(x.effects().RunEventListQueue(x.ctx, &driver.RunEventListQueueParams{Queue: v}))
			})
		}),
		str("RunClaim.queue", func(x *hx, v string) hostileCall {
			enq, enqErr := rs(x).RunEnqueue(x.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: v}}})
			var got []*driver.Run
			return hostileCall{func() (err error) {
				got, err = rs(x).RunClaim(x.ctx, &driver.RunClaimParams{Queue: v, Owner: "a", Limit: 1, Lease: runLease})
				return err
			}, func() error {
				if enqErr != nil {
					return fmt.Errorf("the claim of a queue that could not be enqueued to was accepted (enqueue: %v)", enqErr)
				}
				if len(got) != 1 || got[0].ID != enq[0].Run.ID {
					return fmt.Errorf("claimed %d runs, want run %d", len(got), enq[0].Run.ID)
				}
				return sameString("queue", got[0].Queue, v)
			}}
		}),
		str("RunClaim.owner", func(x *hx, v string) hostileCall {
			x.enqueue(runs.Enqueue{Queue: x.queue()})
			var got []*driver.Run
			return hostileCall{func() (err error) {
				got, err = rs(x).RunClaim(x.ctx, &driver.RunClaimParams{Queue: x.queue(), Owner: v, Limit: 1, Lease: runLease})
				return err
			}, func() error {
				if len(got) != 1 {
					return fmt.Errorf("claimed %d runs", len(got))
				}
				r, err := x.runNow(got[0].ID)
				if err != nil {
					return err
				}
				return sameString("owner", r.Owner, v)
			}}
		}),
		str("RunRenew.owner", func(x *hx, v string) hostileCall {
			r := x.held(v)
			return hostileCall{func() error {
				return ignore(rs(x).RunRenew(x.ctx, &driver.RunRenewParams{ID: r.ID, Fence: r.Fence, Owner: v, Lease: runLease}))
			}, func() error {
				got, err := x.runNow(r.ID)
				if err != nil {
					return err
				}
				return sameString("owner", got.Owner, v)
			}}
		}),
		str("RunRenewMany.owner", func(x *hx, v string) hostileCall {
			r := x.held(v)
			var res *driver.RunRenewManyResult
			return hostileCall{func() (err error) {
				res, err = rs(x).RunRenewMany(x.ctx, &driver.RunRenewManyParams{Owner: v, Lease: runLease, Runs: []driver.RunLeaseRef{{ID: r.ID, Fence: r.Fence}}})
				return err
			}, func() error {
				got, err := x.runNow(r.ID)
				if err != nil {
					return err
				}
				if len(res.Lost) > 0 && got.Owner == v {
					return fmt.Errorf("the owner's own lease was reported lost")
				}
				return nil
			}}
		}),
		str("RunFail.reason", func(x *hx, v string) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(rs(x).RunFail(x.ctx, &driver.RunFailParams{ID: r.ID, Fence: r.Fence, Reason: v}))
			}, func() error {
				got, err := x.runNow(r.ID)
				if err != nil {
					return err
				}
				return sameString("reason", got.Reason, v)
			}}
		}),
		str("RunBlock.reason", func(x *hx, v string) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(rs(x).RunBlock(x.ctx, &driver.RunBlockParams{ID: r.ID, Fence: r.Fence, Reason: v}))
			}, func() error {
				got, err := x.runNow(r.ID)
				if err != nil {
					return err
				}
				return sameString("reason", got.Reason, v)
			}}
		}),
		str("RunCancel.reason", func(x *hx, v string) hostileCall {
			r := x.enqueue(runs.Enqueue{Queue: x.queue()})[0].Run
			return hostileCall{func() error {
				return ignore(rs(x).RunCancel(x.ctx, &driver.RunCancelParams{ID: r.ID, Reason: v}))
			}, func() error {
				got, err := x.runNow(r.ID)
				if err != nil {
					return err
				}
				return sameString("reason", got.Reason, v)
			}}
		}),
		str("RunEffectBegin.key", func(x *hx, v string) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(x.effects().RunEffectBegin(x.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: v}))
			}, func() error { return ignore(x.effectKey(r, v)) }}
		}),
		str("RunEffectCommit.key", func(x *hx, v string) hostileCall {
			r := x.held("a")
			_, _ = x.effects().RunEffectBegin(x.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: v})
			return hostileCall{func() error {
				return ignore(x.effects().RunEffectCommit(x.ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: v, Result: []byte(`{}`)}))
			}, func() error { return x.committed(r, v, []byte(`{}`)) }}
		}),
		str("RunEffectResolve.key", func(x *hx, v string) hostileCall {
			r := x.held("a")
			_, _ = x.effects().RunEffectBegin(x.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: v})
			return hostileCall{func() error {
				return ignore(x.effects().RunEffectResolve(x.ctx, &driver.RunEffectResolveParams{RunID: r.ID, Fence: r.Fence, Key: v, Committed: true, Result: []byte(`{}`)}))
			}, func() error { return x.committed(r, v, []byte(`{}`)) }}
		}),
		str("RunTx.key", func(x *hx, v string) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(x.effects().RunTx(x.ctx, &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: v}, func(any) error { return nil }))
			}, func() error { return x.committed(r, v, nil) }}
		}),
		str("RunEventAppend.kind", func(x *hx, v string) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(x.effects().RunEventAppend(x.ctx, &driver.RunEventAppendParams{Events: []driver.RunEventInsert{{RunID: r.ID, Fence: r.Fence, Seq: 1, Kind: v, Payload: []byte(`{}`)}}}))
			}, func() error {
				evs, err := x.effects().RunEventList(x.ctx, &driver.RunEventListParams{RunID: r.ID})
				if err != nil || len(evs) != 1 {
					return fmt.Errorf("%d events (%v), want 1", len(evs), err)
				}
				return sameString("kind", evs[0].Kind, v)
			}}
		}),
	}
}

// committed requires r's effect k committed with result (compact).
func (x *hx) committed(r *driver.Run, k string, result []byte) error {
	e, err := x.effectKey(r, k)
	if err != nil {
		return err
	}
	if !e.Committed {
		return fmt.Errorf("effect %q is not committed", clip([]byte(k)))
	}
	return sameBytes("result", e.Result, result)
}
