package leasehold_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/sqlite"
)

// Queue control: at most 5 reports at once across every worker and at
// most 100 started a minute, enforced by the store in each claim; a pause
// stops every worker's claims of the queue until the resume.
func ExampleClient_SetQueueLimits() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "leasehold-example")
	defer os.RemoveAll(dir)
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "leasehold.db")})
	if err != nil {
		panic(err)
	}
	c, err := leasehold.NewClient(ctx, d, leasehold.Config{})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	q, err := c.SetQueueLimits(ctx, "reports", leasehold.QueueLimits{MaxRunning: 5, RateLimit: 100, RatePeriod: time.Minute})
	if err != nil {
		panic(err)
	}
	fmt.Println(q.Name, q.MaxRunning, q.RateLimit, q.RatePeriod)

	_, _ = c.Enqueue(ctx, leasehold.Enqueue{Queue: "reports"}, leasehold.Enqueue{Queue: "reports"})
	q, _ = c.PauseQueue(ctx, "reports")
	fmt.Println("paused:", q.Paused)

	_, err = c.PauseQueue(ctx, "reprots")
	fmt.Println(errors.Is(err, leasehold.ErrUnknownQueue))

	_, _ = c.ResumeQueue(ctx, "reports")
	qs, _ := c.Queues(ctx)
	for _, q := range qs {
		fmt.Println(q.Name, "paused:", q.Paused, "available:", q.Counts["available"])
	}
	// Output:
	// reports 5 100 1m0s
	// paused: true
	// true
	// reports paused: false available: 2
}
