package driver

import "context"

// The queue registry's calls behind the input rules (queues.go).

func (v validating) QueuePause(ctx context.Context, p *QueuePauseParams) (*Queue, error) {
	return checked(ctx, p, typed(v, v.Driver.QueuePause))
}

func (v validating) QueueSetLimits(ctx context.Context, p *QueueSetLimitsParams) (*Queue, error) {
	return checked(ctx, p, typed(v, v.Driver.QueueSetLimits))
}

func (v validating) QueueList(ctx context.Context, p *QueueListParams) ([]*Queue, error) {
	return checked(ctx, p, typed(v, v.Driver.QueueList))
}
