package host

import (
	"context"

	"github.com/leasehold/leasehold/driver"
)

// InboxLen is how many commands wait in a held world's inbox (-1: not
// held here): a test's signal that its submissions are queued.
func InboxLen(h *Host, w string) int {
	h.mu.Lock()
	hw := h.held[w]
	h.mu.Unlock()
	if hw == nil {
		return -1
	}
	hw.mu.Lock()
	defer hw.mu.Unlock()
	return len(hw.inbox)
}

// LookNowIfFree makes the pool's first look at head now, as the look
// loop's tick would, unless the world's slot is locked (then the look
// would wait for it, and it reports false without looking).
func LookNowIfFree(h *Host, head *driver.World) bool {
	s, err := h.slot(head.World)
	if err != nil {
		return false
	}
	done, cancel := context.WithCancel(context.Background())
	cancel() // a lock with an ended context is a try-lock: it takes a free slot, else returns at once
	if s.mu.lock(done, h.cfg.Runtime) != nil {
		return false
	}
	s.mu.unlock()
	ok, err := h.firstLook(head)
	return err == nil && ok
}
