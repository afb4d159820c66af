package drivertest

import (
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// num, count and dur build the entries of the integer, batch-size and
// duration corpora.
func num(name string, prep func(x *hx, v int64) hostileCall) hostileEntry {
	return hostileEntry{name: name, kind: "int", values: intValues, prepare: func(x *hx, v any) hostileCall { return prep(x, v.(int64)) }}
}

func count(name string, prep func(x *hx, n int) hostileCall) hostileEntry {
	return hostileEntry{name: name, kind: "count", values: countValues, prepare: func(x *hx, v any) hostileCall { return prep(x, int(v.(int64))) }}
}

func dur(name string, prep func(x *hx, v time.Duration) hostileCall) hostileEntry {
	return hostileEntry{name: name, kind: "duration", values: durationValues, prepare: func(x *hx, v any) hostileCall { return prep(x, v.(time.Duration)) }}
}

// readOnly is a call with nothing to read back.
func readOnly(call func() error) hostileCall { return hostileCall{call: call} }

func runValueEntries() []hostileEntry {
	rs := func(x *hx) driver.RunStore { return x.runStore() }
	es := func(x *hx) driver.EffectStore { return x.effects() }
	return []hostileEntry{
		// JSON payloads and results.
		js("RunEnqueue.payload", func(x *hx, v []byte) hostileCall {
			var got []driver.RunEnqueued
			return hostileCall{func() (err error) {
				got, err = rs(x).RunEnqueue(x.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", Payload: v}}})
				return err
			}, func() error {
				r, err := x.runNow(got[0].Run.ID)
				if err != nil {
					return err
				}
				return sameBytes("payload", r.Payload, compactOf(v, []byte("null")))
			}}
		}),
		js("RunComplete.result", func(x *hx, v []byte) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(rs(x).RunComplete(x.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence, Result: v}))
			}, func() error { return x.result(r.ID, v) }}
		}),
		js("RunCompleteMany.result", func(x *hx, v []byte) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(rs(x).RunCompleteMany(x.ctx, &driver.RunCompleteManyParams{Runs: []driver.RunCompletion{{ID: r.ID, Fence: r.Fence, Result: v}}}))
			}, func() error { return x.result(r.ID, v) }}
		}),
		js("RunEffectCommit.result", func(x *hx, v []byte) hostileCall {
			r := x.held("a")
			_, _ = es(x).RunEffectBegin(x.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "k"})
			return hostileCall{func() error {
				return ignore(es(x).RunEffectCommit(x.ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: "k", Result: v}))
			}, func() error { return x.committed(r, "k", resultOf(v)) }}
		}),
		js("RunEffectResolve.result", func(x *hx, v []byte) hostileCall {
			r := x.held("a")
			_, _ = es(x).RunEffectBegin(x.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "k"})
			return hostileCall{func() error {
				return ignore(es(x).RunEffectResolve(x.ctx, &driver.RunEffectResolveParams{RunID: r.ID, Fence: r.Fence, Key: "k", Committed: true, Result: v}))
			}, func() error { return x.committed(r, "k", resultOf(v)) }}
		}),
		js("RunTx.result", func(x *hx, v []byte) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(es(x).RunTx(x.ctx, &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: "k", Result: v}, func(any) error { return nil }))
			}, func() error { return x.committed(r, "k", resultOf(v)) }}
		}),
		js("RunEventAppend.payload", func(x *hx, v []byte) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(es(x).RunEventAppend(x.ctx, &driver.RunEventAppendParams{Events: []driver.RunEventInsert{{RunID: r.ID, Fence: r.Fence, Seq: 1, Kind: "k", Payload: v}}}))
			}, func() error {
				evs, err := es(x).RunEventList(x.ctx, &driver.RunEventListParams{RunID: r.ID})
				if err != nil || len(evs) != 1 {
					return fmt.Errorf("%d events (%v), want 1", len(evs), err)
				}
				return sameBytes("payload", evs[0].Payload, compactOf(v, []byte("null")))
			}}
		}),

		// Integers: ids, fences, limits, priorities, attempts, sequence numbers.
		num("RunGet.id", func(x *hx, v int64) hostileCall {
			x.enqueue(runs.Enqueue{Queue: "q"}, runs.Enqueue{Queue: "q"})
			var got *driver.Run
			return hostileCall{func() (err error) { got, err = x.runNow(v); return err }, func() error {
				if got.ID != v {
					return fmt.Errorf("run %d read as %d", v, got.ID)
				}
				return nil
			}}
		}),
		num("RunUnblock.id", func(x *hx, v int64) hostileCall {
			r := x.held("a")
			_ = ignore(rs(x).RunBlock(x.ctx, &driver.RunBlockParams{ID: r.ID, Fence: r.Fence}))
			return readOnly(func() error { return ignore(rs(x).RunUnblock(x.ctx, &driver.RunUnblockParams{ID: v})) })
		}),
		num("RunRetry.id", func(x *hx, v int64) hostileCall {
			r := x.held("a")
			_ = ignore(rs(x).RunCancel(x.ctx, &driver.RunCancelParams{ID: r.ID, Reason: "op"}))
			return readOnly(func() error { return ignore(rs(x).RunRetry(x.ctx, &driver.RunRetryParams{ID: v, Fence: 0})) })
		}),
		num("RunRetry.fence", func(x *hx, v int64) hostileCall {
			r := x.held("a")
			_ = ignore(rs(x).RunCancel(x.ctx, &driver.RunCancelParams{ID: r.ID, Reason: "op"}))
			return readOnly(func() error { return ignore(rs(x).RunRetry(x.ctx, &driver.RunRetryParams{ID: r.ID, Fence: v})) })
		}),
		num("RunComplete.fence", func(x *hx, v int64) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(rs(x).RunComplete(x.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: v}))
			}, func() error {
				got, err := x.runNow(r.ID)
				if err != nil {
					return err
				}
				if got.State != runs.StateCompleted || got.Fence != v {
					return fmt.Errorf("run is %s under fence %d, want completed under %d", got.State, got.Fence, v)
				}
				return nil
			}}
		}),
		num("RunSnooze.fence", func(x *hx, v int64) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(rs(x).RunSnooze(x.ctx, &driver.RunSnoozeParams{ID: r.ID, Fence: v, MaxSnoozes: runs.DefaultMaxSnoozes}))
			}, func() error {
				got, err := x.runNow(r.ID)
				if err != nil {
					return err
				}
				if got.State != runs.StateAvailable || got.Fence != v || got.Snoozes != 1 {
					return fmt.Errorf("run is %s under fence %d after %d snoozes, want available under %d after 1", got.State, got.Fence, got.Snoozes, v)
				}
				return nil
			}}
		}),
		num("RunSnooze.max_snoozes", func(x *hx, v int64) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(rs(x).RunSnooze(x.ctx, &driver.RunSnoozeParams{ID: r.ID, Fence: r.Fence, MaxSnoozes: int(v)}))
			}, func() error {
				got, err := x.runNow(r.ID)
				if err != nil || got.Snoozes != 1 {
					return fmt.Errorf("%d snoozes (%v), want 1", got.Snoozes, err)
				}
				return nil
			}}
		}),
		num("RunRenew.fence", func(x *hx, v int64) hostileCall {
			r := x.held("a")
			return readOnly(func() error {
				return ignore(rs(x).RunRenew(x.ctx, &driver.RunRenewParams{ID: r.ID, Fence: v, Owner: "a", Lease: runLease}))
			})
		}),
		num("RunClaim.limit", func(x *hx, v int64) hostileCall {
			x.enqueue(runs.Enqueue{Queue: x.queue()}, runs.Enqueue{Queue: x.queue()})
			var got []*driver.Run
			return hostileCall{func() (err error) {
				got, err = rs(x).RunClaim(x.ctx, &driver.RunClaimParams{Queue: x.queue(), Owner: "a", Limit: int(v), Lease: runLease})
				return err
			}, func() error {
				if want := min(v, 2); int64(len(got)) != want {
					return fmt.Errorf("claimed %d runs, want %d", len(got), want)
				}
				return nil
			}}
		}),
		num("RunEnqueue.priority", func(x *hx, v int64) hostileCall {
			var got []driver.RunEnqueued
			return hostileCall{func() (err error) {
				got, err = rs(x).RunEnqueue(x.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", Priority: int(v)}}})
				return err
			}, func() error {
				r, err := x.runNow(got[0].Run.ID)
				if err != nil || int64(r.Priority) != v {
					return fmt.Errorf("priority %d (%v), want %d", r.Priority, err, v)
				}
				return nil
			}}
		}),
		num("RunEnqueue.max_attempts", func(x *hx, v int64) hostileCall {
			var got []driver.RunEnqueued
			return hostileCall{func() (err error) {
				got, err = rs(x).RunEnqueue(x.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", MaxAttempts: int(v)}}})
				return err
			}, func() error {
				want := v
				if v == 0 {
					want = runs.DefaultAttempts // documented: 0 means the default
				}
				r, err := x.runNow(got[0].Run.ID)
				if err != nil || int64(r.MaxAttempts) != want {
					return fmt.Errorf("max attempts %d (%v), want %d", r.MaxAttempts, err, want)
				}
				return nil
			}}
		}),
		num("RunEventAppend.seq", func(x *hx, v int64) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(es(x).RunEventAppend(x.ctx, &driver.RunEventAppendParams{Events: []driver.RunEventInsert{{RunID: r.ID, Fence: r.Fence, Seq: v, Kind: "k"}}}))
			}, func() error {
				evs, err := es(x).RunEventList(x.ctx, &driver.RunEventListParams{RunID: r.ID})
				if err != nil || len(evs) != 1 || evs[0].Seq != v {
					return fmt.Errorf("events %v (%v), want one of seq %d", evs, err, v)
				}
				return nil
			}}
		}),
		num("RunEventList.after_seq", func(x *hx, v int64) hostileCall {
			r := x.held("a")
			return readOnly(func() error {
				return ignore(es(x).RunEventList(x.ctx, &driver.RunEventListParams{RunID: r.ID, AfterFence: r.Fence, AfterSeq: v}))
			})
		}),
		num("RunEventList.limit", func(x *hx, v int64) hostileCall {
			r := x.held("a")
			return readOnly(func() error {
				return ignore(es(x).RunEventList(x.ctx, &driver.RunEventListParams{RunID: r.ID, Limit: int(v)}))
			})
		}),
		num("RunEventListQueue.after_pos", func(x *hx, v int64) hostileCall {
			return readOnly(func() error {
				return ignore(es(x).RunEventListQueue(x.ctx, &driver.RunEventListQueueParams{Queue: "q", After: driver.QueueEventCursor{Pos: v, RunID: 1, Fence: 1}}))
			})
		}),
		num("RunEventListQueue.limit", func(x *hx, v int64) hostileCall {
			return readOnly(func() error {
				return ignore(es(x).RunEventListQueue(x.ctx, &driver.RunEventListQueueParams{Queue: "q", Limit: int(v)}))
			})
		}),
		num("RunEffectList.run_id", func(x *hx, v int64) hostileCall {
			return readOnly(func() error { return ignore(es(x).RunEffectList(x.ctx, &driver.RunEffectListParams{RunID: v})) })
		}),
		num("RunReclaim.limit", func(x *hx, v int64) hostileCall {
			return readOnly(func() error { return ignore(rs(x).RunReclaim(x.ctx, &driver.RunReclaimParams{Limit: int(v)})) })
		}),

		// Batch sizes.
		count("RunCompleteMany.count", func(x *hx, n int) hostileCall {
			cs := make([]driver.RunCompletion, n)
			for i := range cs {
				cs[i] = driver.RunCompletion{ID: int64(i + 1), Fence: 1}
			}
			var res *driver.RunCompleteManyResult
			return hostileCall{func() (err error) {
				res, err = rs(x).RunCompleteMany(x.ctx, &driver.RunCompleteManyParams{Runs: cs})
				return err
			}, func() error {
				if len(res.Fenced) != n { // the store holds no run
					return fmt.Errorf("%d of %d completions of missing runs fenced", len(res.Fenced), n)
				}
				return nil
			}}
		}),
		count("RunRenewMany.count", func(x *hx, n int) hostileCall {
			refs := make([]driver.RunLeaseRef, n)
			for i := range refs {
				refs[i] = driver.RunLeaseRef{ID: int64(i + 1), Fence: 1}
			}
			var res *driver.RunRenewManyResult
			return hostileCall{func() (err error) {
				res, err = rs(x).RunRenewMany(x.ctx, &driver.RunRenewManyParams{Owner: "a", Lease: runLease, Runs: refs})
				return err
			}, func() error {
				if len(res.Lost) != n {
					return fmt.Errorf("%d of %d renewals of missing runs lost", len(res.Lost), n)
				}
				return nil
			}}
		}),

		// Durations: leases, delays, retries.
		dur("RunClaim.lease", func(x *hx, v time.Duration) hostileCall {
			r := x.enqueue(runs.Enqueue{Queue: x.queue()})[0].Run
			return hostileCall{func() error {
				return ignore(rs(x).RunClaim(x.ctx, &driver.RunClaimParams{Queue: x.queue(), Owner: "a", Limit: 1, Lease: v}))
			}, func() error { return x.expiresIn(r.ID, v) }}
		}),
		dur("RunRenew.lease", func(x *hx, v time.Duration) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(rs(x).RunRenew(x.ctx, &driver.RunRenewParams{ID: r.ID, Fence: r.Fence, Owner: "a", Lease: v}))
			}, func() error { return x.expiresIn(r.ID, v) }}
		}),
		dur("RunRenewMany.lease", func(x *hx, v time.Duration) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(rs(x).RunRenewMany(x.ctx, &driver.RunRenewManyParams{Owner: "a", Lease: v, Runs: []driver.RunLeaseRef{{ID: r.ID, Fence: r.Fence}}}))
			}, func() error { return x.expiresIn(r.ID, v) }}
		}),
		dur("RunFail.retry_after", func(x *hx, v time.Duration) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(rs(x).RunFail(x.ctx, &driver.RunFailParams{ID: r.ID, Fence: r.Fence, Reason: "x", RetryAfter: v}))
			}, func() error { return x.scheduledIn(r.ID, v) }}
		}),
		dur("RunSnooze.delay", func(x *hx, v time.Duration) hostileCall {
			r := x.held("a")
			return hostileCall{func() error {
				return ignore(rs(x).RunSnooze(x.ctx, &driver.RunSnoozeParams{ID: r.ID, Fence: r.Fence, Delay: v, MaxSnoozes: runs.DefaultMaxSnoozes}))
			}, func() error { return x.scheduledIn(r.ID, v) }}
		}),
		dur("RunEnqueue.delay", func(x *hx, v time.Duration) hostileCall {
			var got []driver.RunEnqueued
			return hostileCall{func() (err error) {
				got, err = rs(x).RunEnqueue(x.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", Delay: v}}})
				return err
			}, func() error { return x.scheduledIn(got[0].Run.ID, v) }}
		}),
	}
}

// result requires run id completed with v's compact form (nil when none).
func (x *hx) result(id int64, v []byte) error {
	r, err := x.runNow(id)
	if err != nil {
		return err
	}
	if r.State != runs.StateCompleted {
		return fmt.Errorf("run is %s, want completed", r.State)
	}
	return sameBytes("result", r.Result, resultOf(v))
}

// resultOf is the form an optional result reads back in: none (no bytes
// at all) is nil, stored as NULL; anything else is a JSON value, so
// nothing but whitespace is the payload rule's null.
func resultOf(v []byte) []byte {
	if len(v) == 0 {
		return nil
	}
	return compactOf(v, []byte("null"))
}

// expiresIn requires run id to expire lease after the store's now.
func (x *hx) expiresIn(id int64, lease time.Duration) error {
	r, err := x.runNow(id)
	if err != nil {
		return err
	}
	return sameTime("expires_at", r.ExpiresAt, StartTime.Add(lease))
}

// scheduledIn requires run id scheduled delay after the store's now.
func (x *hx) scheduledIn(id int64, delay time.Duration) error {
	r, err := x.runNow(id)
	if err != nil {
		return err
	}
	return sameTime("scheduled_at", r.ScheduledAt, StartTime.Add(delay))
}
