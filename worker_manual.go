package leasehold

import "context"

// WorkOne claims one due run of queue and works it in the calling
// goroutine, exactly as the worker's own loop would (lease, heartbeat,
// handler, fenced final write), and returns the run as the store has it
// afterwards — or nil when no run of queue was due. The worker must have
// been created with WorkerConfig.Manual and started.
func (w *Worker) WorkOne(ctx context.Context, queue string) (*Run, error) {
	return w.w.WorkOne(ctx, queue)
}
