package host

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
