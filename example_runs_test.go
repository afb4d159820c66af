package leasehold_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/sqlite"
)

// A worker works a run: one idempotent effect, a few events, a result.
// The effect function gets the run's fence token and a stable idempotency
// key to hand to the downstream system.
func ExampleClient_NewWorker() {
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

	enq, _ := c.Enqueue(ctx, leasehold.Enqueue{Queue: "emails", Payload: []byte(`{"to":"ada@example.com"}`)})
	done := make(chan struct{})
	w, _ := c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"emails": 4}})
	w.Handle("emails", func(ctx context.Context, r *leasehold.RunHandle) error {
		defer close(done)
		_, err := r.Effect(ctx, "send", 10*time.Second, func(ctx context.Context, tok leasehold.EffectToken) ([]byte, error) {
			fmt.Println("sending with idempotency key", tok.IdempotencyKey, "and fence", tok.Fence)
			return []byte(`{"message_id":"m-1"}`), nil
		})
		if err != nil {
			return err
		}
		r.SetResult([]byte(`{"sent":true}`))
		return r.Emit(ctx, "sent", nil)
	})
	_ = w.Start(ctx)
	<-done
	_ = w.Stop(ctx)

	run, _ := c.Run(ctx, enq[0].Run.ID)
	fmt.Println(run.State, string(run.Result))
	// Output:
	// sending with idempotency key 1:send and fence 1
	// completed {"sent":true}
}
