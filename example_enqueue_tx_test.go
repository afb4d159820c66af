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

// The order row and the run that ships it are written in one transaction
// of the application's: the run exists if and only if the order does. On
// Postgres, pass a pgx.Tx from your own pool instead.
func ExampleClient_EnqueueTx() {
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

	tx, err := d.BeginTx(ctx) // on the store's writer: keep it short
	if err != nil {
		panic(err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY)`); err != nil {
		panic(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO orders (id) VALUES (7)`); err != nil {
		panic(err)
	}
	enq, err := c.EnqueueTx(ctx, tx, leasehold.Enqueue{Queue: "ship", Payload: []byte(`{"order":7}`)})
	if err != nil {
		_ = tx.Rollback()
		panic(err)
	}
	_, err = c.Run(ctx, enq[0].Run.ID)
	fmt.Println("visible before commit:", !errors.Is(err, leasehold.ErrNotFound))
	if err := tx.Commit(); err != nil {
		panic(err)
	}
	run, _ := c.Run(ctx, enq[0].Run.ID)
	fmt.Println("after commit:", run.State, string(run.Payload))
	// Output:
	// visible before commit: false
	// after commit: available {"order":7}
}
