package sim

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// The world's journal as clients observed it, for porcupine: lease changes
// (grant, renew, handoff — the holders'; sweep — the store's) and append
// batches, each with the positions the store gave it. The sequential model
// is the append rule at its core: an accepted append carries the epoch and
// holder in force, a renewal keeps them, a grant, handoff or sweep starts
// the next epoch, and positions only grow. Refusals are always allowed
// (an expiry, which depends on time, may explain any of them).

type worldOp int

const (
	wRenew worldOp = iota
	wHandoff
	wSweep
	wAppend
)

func (k worldOp) String() string { return [...]string{"renew", "handoff", "sweep", "append"}[k] }

type worldInput struct {
	kind   worldOp
	holder string // the writer (renew, handoff, append); home for a sweep
	epoch  int64  // the writer's epoch
	to     string // handoff target
}

type worldOutput struct {
	ok        bool
	epoch     int64   // after a lease change
	holder    string  // after a lease change
	positions []int64 // the change's entry, or the accepted appends, ascending
}

type worldState struct {
	epoch   int64
	holder  string
	lastPos int64
}

var worldModel = porcupine.Model{
	Init: func() any { return worldState{epoch: 1, holder: nodeName(0), lastPos: 1} },
	Step: func(st, in, out any) (bool, any) {
		s, i, o := st.(worldState), in.(worldInput), out.(worldOutput)
		if !o.ok {
			return true, s
		}
		next := s
		for _, p := range o.positions {
			if p <= next.lastPos {
				return false, s
			}
			next.lastPos = p
		}
		switch i.kind {
		case wAppend:
			return s.epoch == i.epoch && s.holder == i.holder, next
		case wRenew:
			return s.epoch == i.epoch && s.holder == i.holder && o.epoch == s.epoch && o.holder == s.holder, next
		case wHandoff:
			next.epoch, next.holder = o.epoch, o.holder
			return s.epoch == i.epoch && s.holder == i.holder && o.epoch == s.epoch+1 && o.holder == i.to, next
		case wSweep:
			next.epoch, next.holder = o.epoch, o.holder
			return o.epoch == s.epoch+1 && o.holder == i.holder, next
		}
		return false, s
	},
	DescribeOperation: func(in, out any) string {
		i, o := in.(worldInput), out.(worldOutput)
		return fmt.Sprintf("%s(%s, epoch %d) -> ok=%v epoch %d %s at %v", i.kind, i.holder, i.epoch, o.ok, o.epoch, o.holder, o.positions)
	},
	DescribeState: func(st any) string {
		s := st.(worldState)
		return fmt.Sprintf("epoch %d %s, last %d", s.epoch, s.holder, s.lastPos)
	},
}
