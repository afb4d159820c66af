package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/leasehold/leasehold/runs"
)

// The run state transitions the workers (and the reclaimer) made, as a
// porcupine history: each operation's interval runs from the client's send
// to the client's receipt of the answer (or to the end of time, when the
// answer was lost: the outcome may have taken effect at any point after
// the send). Outputs are the store's answers. porcupine then checks that
// some sequential order of them, within their intervals, is allowed by the
// sequential model of one fenced run below — the fencing rules stated
// once, independently of the SQL.

type opKind int

const (
	opClaim opKind = iota
	opComplete
	opFail
	opReclaim
)

func (k opKind) String() string {
	return [...]string{"claim", "complete", "fail", "reclaim"}[k]
}

type runInput struct {
	run   int64
	kind  opKind
	fence int64 // complete, fail: the writer's fence
}

type runOutput struct {
	ok    bool
	fence int64      // claim, reclaim: the fence after
	state runs.State // fail, reclaim: the state after
}

// maxAttempts is every simulated run's attempt budget: the model tracks
// attempts as the store does, so it must know the budget too.
const maxAttempts = 1000

// op is the transition of runs.Transition that k records.
func (k opKind) op() runs.Op {
	return [...]runs.Op{runs.OpClaim, runs.OpComplete, runs.OpFail, runs.OpReclaim}[k]
}

// runModel is the sequential specification of one run's lease: the run
// state machine itself, runs.Transition, which the drivers implement in
// SQL. A lease change (claim, reclaim) must answer with the status the
// transition gives; a holder's write is accepted exactly when the
// transition accepts it (a fail then also names the state it left). The
// reclaimer selects only expired leases, which porcupine cannot see, so a
// reclaim is taken as asked of an expired lease.
var runModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[int64][]porcupine.Operation{}
		var order []int64
		for _, op := range h {
			id := op.Input.(runInput).run
			if _, ok := by[id]; !ok {
				order = append(order, id)
			}
			by[id] = append(by[id], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, id := range order {
			out = append(out, by[id])
		}
		return out
	},
	Init: func() any { return runs.Status{State: runs.StateAvailable, MaxAttempts: maxAttempts} },
	Step: func(st, in, out any) (bool, any) {
		s, i, o := st.(runs.Status), in.(runInput), out.(runOutput)
		next, err := runs.Transition(s, runs.Event{Op: i.kind.op(), Fence: i.fence, Expired: true})
		switch i.kind {
		case opClaim, opReclaim:
			return err == nil && o.fence == next.Fence && o.state == next.State, next
		case opFail:
			if o.ok {
				return err == nil && o.state == next.State, next
			}
		case opComplete:
			if o.ok {
				return err == nil, next
			}
		}
		return err != nil, s // refused: exactly when the transition refuses, and nothing changed
	},
	DescribeOperation: func(in, out any) string {
		i, o := in.(runInput), out.(runOutput)
		return fmt.Sprintf("run %d %s(fence %d) -> ok=%v fence=%d %s", i.run, i.kind, i.fence, o.ok, o.fence, o.state)
	},
	DescribeState: func(st any) string {
		s := st.(runs.Status)
		return fmt.Sprintf("%s/%d (attempt %d)", s.State, s.Fence, s.Attempt)
	},
}

// history collects the operations of one porcupine model: the runs'
// (runModel) or the world's (worldModel).
type history struct {
	l     *loop
	model porcupine.Model
	ops   []*porcupine.Operation
}

// begin opens an operation sent now by client; it is recorded only if
// the store applied it (applied sets its output).
func (h *history) begin(client int, in any) *porcupine.Operation {
	return &porcupine.Operation{ClientId: client, Input: in, Call: int64(h.l.now), Return: math.MaxInt64}
}

// applied records the store's answer to op.
func (h *history) applied(op *porcupine.Operation, out any) {
	op.Output = out
	h.ops = append(h.ops, op)
}

// answered records that the client received the answer now.
func (h *history) answered(op *porcupine.Operation, received bool) {
	if received && op.Output != nil {
		op.Return = int64(h.l.now)
	}
}

// check runs porcupine over the history.
func (h *history) check(timeout time.Duration) porcupine.CheckResult {
	ops := make([]porcupine.Operation, len(h.ops))
	for i, op := range h.ops {
		ops[i] = *op
	}
	res, _ := porcupine.CheckOperationsVerbose(h.model, ops, timeout)
	return res
}

// logIllegal writes to the trace the operations of each partition (one run,
// or the world) that porcupine finds illegal on its own, so a failing
// seed's report shows the history that broke the model.
func (h *history) logIllegal(m porcupine.Model) {
	ops := make([]porcupine.Operation, len(h.ops))
	for i, op := range h.ops {
		ops[i] = *op
	}
	for _, part := range m.Partition(ops) {
		if porcupine.CheckOperations(porcupine.Model{Init: m.Init, Step: m.Step, Equal: m.Equal}, part) {
			continue
		}
		for _, op := range part {
			ret := "lost"
			if op.Return != math.MaxInt64 {
				ret = fmt.Sprintf("%.3f", time.Duration(op.Return).Seconds())
			}
			h.l.logf("illegal history: [%.3f, %s] client %d: %s", time.Duration(op.Call).Seconds(), ret, op.ClientId, m.DescribeOperation(op.Input, op.Output))
		}
	}
}
