package leasehold

import (
	"context"

	"github.com/leasehold/leasehold/driver"
)

// Retry sends a failed or cancelled run round again, as River's JobRetry
// does: available at once, with one attempt more than it has used when
// its budget is spent. fence, when not 0, is the fence the caller saw:
// the retry applies only while the run still stands at it (ErrFenced
// otherwise), so two operators acting on the same view retry it once. A
// run in another state is refused with ErrConflict.
func (c *Client) Retry(ctx context.Context, id, fence int64) (*Run, error) {
	return c.d.RunRetry(ctx, &driver.RunRetryParams{ID: id, Fence: fence})
}
