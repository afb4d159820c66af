// Package runs is the pure core of durable runs (SPEC §3): run states and
// their transitions, the fenced-write rules, enqueue validation and retry
// backoff. It does no I/O and reads no clock. The drivers carry the
// transitions out as conditional writes whose WHERE states the fence:
//
//	enqueue ──▶ available ──claim (fence+1, attempt+1)──▶ running
//	              ▲   ▲                                      │
//	              │   ├── snooze (attempt-1, bounded) ───────┤
//	   unblock    │   └── fail (attempt < max: backoff) ─────┤
//	  blocked ◀───┼────── block (lease released) ────────────┤
//	              └────── reclaim (expired, fence+1) ────────┤
//	                       complete ──▶ completed ◀──────────┤
//	       fail (attempts exhausted) / reclaim ──▶ failed ◀──┘
//	   cancel (operator, fence+1) from available|running|blocked ──▶ cancelled
//
// Every write by a runner (renew, complete, fail, snooze, block) names the fence it
// claimed with and is accepted only WHERE id = $id AND fence = $fence AND
// state = 'running': a runner whose run was reclaimed, cancelled or claimed
// again is fenced out and changes nothing.
package runs
