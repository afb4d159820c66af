// Command sqliteonly is the smallest Leasehold program on the embedded
// store: it opens ./sqliteonly.db (or the file named by its one argument),
// enqueues a run, works it with one idempotent effect and prints the run's
// final state. It imports only the root package and driver/sqlite, so its
// binary links no Postgres driver: `go version -m` on it lists no pgx.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/sqlite"
)

func main() {
	path := "sqliteonly.db"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, path, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sqliteonly:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, path string, out io.Writer) error {
	d, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		return err
	}
	c, err := leasehold.NewClient(ctx, d, leasehold.Config{})
	if err != nil {
		return err
	}
	defer c.Close()

	enq, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "greetings", Payload: []byte(`{"to":"ada"}`)})
	if err != nil {
		return err
	}
	id := enq[0].Run.ID
	done := make(chan struct{})
	w, err := c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"greetings": 1}})
	if err != nil {
		return err
	}
	w.Handle("greetings", func(ctx context.Context, r *leasehold.RunHandle) error {
		_, err := r.Effect(ctx, "greet", time.Second, func(ctx context.Context, tok leasehold.EffectToken) ([]byte, error) {
			fmt.Fprintf(out, "hello, ada (idempotency key %s, fence %d)\n", tok.IdempotencyKey, tok.Fence)
			return []byte(`{"greeted":true}`), nil
		})
		if r.ID == id {
			defer close(done)
		}
		return err
	})
	if err := w.Start(ctx); err != nil {
		return err
	}
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := w.Stop(ctx); err != nil {
		return err
	}
	r, err := c.Run(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "run %d: %s after %d attempt(s)\n", r.ID, r.State, r.Attempt)
	return nil
}
