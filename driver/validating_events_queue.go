package driver

import "context"

// The queue event list behind Validating (events_queue.go): checked and
// its page size defaulted before any store sees it.

func (v validating) RunEventListQueue(ctx context.Context, p *RunEventListQueueParams) (*QueueEventPage, error) {
	return normalizedCall(ctx, p, typed(v, v.Driver.RunEventListQueue))
}
