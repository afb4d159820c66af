package leasehold_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/sqlite"
)

// A world's lease is handed from its home to a node; the old holder's late
// write is fenced by the store, and the audit proves who held the lease at
// every position.
func Example() {
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

	w, _ := c.CreateWorld(ctx, "orders", "home-1")
	c.Append(ctx, leasehold.AppendParams{World: "orders", Holder: "home-1", Epoch: w.Epoch,
		SeenPosition: w.GrantedAt, Kind: "order.placed", Payload: []byte(`{"id":7}`)})

	w, _ = c.Handoff(ctx, "orders", "home-1", "node-a", w.Epoch)
	pos, _ := c.Append(ctx, leasehold.AppendParams{World: "orders", Holder: "node-a", Epoch: w.Epoch,
		SeenPosition: w.GrantedAt, Kind: "order.shipped", Payload: []byte(`{"id":7}`)})
	fmt.Println("node-a appended at position", pos)

	_, err = c.Append(ctx, leasehold.AppendParams{World: "orders", Holder: "home-1", Epoch: 1,
		SeenPosition: 1, Kind: "order.placed", Payload: []byte(`{"id":8}`)})
	fmt.Println("zombie fenced:", errors.Is(err, leasehold.ErrFenced))

	rep, _ := c.Audit(ctx, "orders")
	for _, s := range rep.Spans {
		fmt.Printf("positions %d-%d: epoch %d held by %s\n", s.From, s.To, s.Epoch, s.Holder)
	}
	fmt.Println("audit ok:", rep.OK())
	// Output:
	// node-a appended at position 4
	// zombie fenced: true
	// positions 1-2: epoch 1 held by home-1
	// positions 3-5: epoch 2 held by node-a
	// audit ok: true
}
