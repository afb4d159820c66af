package world

// Queued is how many appends wait in a's queues, not yet taken into a
// batch (appender_test.go).
func Queued(a *Appender) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, q := range a.queues {
		n += len(q.pending)
	}
	return n
}
