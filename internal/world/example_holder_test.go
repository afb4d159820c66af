package world_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
)

// A holder's life: it looks, is handed the lease, renews synchronously
// before its first append, appends, and hands the lease on.
func ExampleHolder() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "holder-example-*")
	defer os.RemoveAll(dir)
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(dir, "lh.db")})
	if err != nil {
		panic(err)
	}
	defer d.Close()
	if _, err := d.Migrate(ctx); err != nil {
		panic(err)
	}
	if _, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: "w", Home: "home", Term: 30 * time.Second}); err != nil {
		panic(err)
	}

	h, err := world.NewHolder(world.HolderConfig{Store: d, World: "w", Name: "node-1"})
	if err != nil {
		panic(err)
	}
	_, adopted, _ := h.Read(ctx) // the first look: epoch 1 is home's
	fmt.Println("adopted at the first look:", adopted)

	// Home hands the lease to node-1 (as its last act under epoch 1).
	_, err = d.LeaseChange(ctx, &driver.LeaseChangeParams{World: "w", Op: "handoff",
		Plan: func(w *driver.World, now time.Time) (journal.Plan, error) {
			return journal.PlanHandoff(w.State, now, "home", "node-1", w.Epoch, 30*time.Second)
		}})
	if err != nil {
		panic(err)
	}
	if _, adopted, _ = h.Read(ctx); adopted {
		fmt.Println("adopted epoch", h.Epoch())
	}
	_, err = h.Append(ctx, h.GrantedAt(), world.Entry{Kind: "op", Payload: []byte(`{"n":1}`)})
	fmt.Println("append before renewing:", err)

	if err := h.Renew(ctx); err != nil {
		panic(err)
	}
	outs, err := h.Append(ctx, h.GrantedAt(), world.Entry{Kind: "op", Payload: []byte(`{"n":1}`)})
	if err != nil || outs[0].Err != nil {
		panic(fmt.Sprint(err, outs))
	}
	fmt.Println("appended at position", outs[0].Position)

	w, err := h.Handoff(ctx, "node-2")
	if err != nil {
		panic(err)
	}
	fmt.Printf("handed off: epoch %d held by %s; node-1 holds epoch %d\n", w.Epoch, w.Holder, h.Epoch())
	// Output:
	// adopted at the first look: false
	// adopted epoch 2
	// append before renewing: append to world w by "node-1" under epoch 2 refused by the holder: not_renewed
	// appended at position 4
	// handed off: epoch 3 held by node-2; node-1 holds epoch 0
}
