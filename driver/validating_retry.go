package driver

import "context"

// RunRetry is validated here, beside the other Validating methods
// (TestEveryParamsIsValidatedAboveTheDriver reads validating*.go).
func (v validating) RunRetry(ctx context.Context, p *RunRetryParams) (*Run, error) {
	return checked(ctx, p, typed(v, v.Driver.RunRetry))
}
