// Command billing is a small Leasehold program whose tests use package
// leaseholdtest: an order and its invoice run are written in one
// transaction (Client.EnqueueTx), and the invoice handler charges a
// payment gateway through an idempotent effect, reconciling an uncertain
// charge by asking the gateway with the effect's idempotency key. It
// opens ./billing.db (or the file named by its one argument), places one
// order, works its invoice and prints what happened.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/sqlite"
)

func main() {
	path := "billing.db"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, path, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "billing:", err)
		os.Exit(1)
	}
}

// Gateway is the payment provider: Charge takes an idempotency key, and
// Lookup says whether a charge with that key went through.
type Gateway interface {
	Charge(ctx context.Context, key string, cents int) (string, error)
	Lookup(ctx context.Context, key string) (receipt string, found bool, err error)
}

// Invoice is the invoice run's payload.
type Invoice struct {
	Order int `json:"order"`
	Cents int `json:"cents"`
}

// PlaceOrder writes the order row and enqueues its invoice run in the
// caller's transaction tx: both or neither.
func PlaceOrder(ctx context.Context, c *leasehold.Client, tx *sql.Tx, order, cents int) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO orders (id, cents) VALUES (?, ?)`, order, cents); err != nil {
		return err
	}
	p, _ := json.Marshal(Invoice{Order: order, Cents: cents})
	_, err := c.EnqueueTx(ctx, tx, leasehold.Enqueue{Queue: "invoice", Payload: p, UniqueKey: fmt.Sprintf("invoice:%d", order)})
	return err
}

// InvoiceHandler charges the order once. An uncertain charge (an earlier
// attempt recorded its intent and stopped before its result was
// committed) is reconciled with the gateway by the idempotency key: found,
// it is recorded as done with its receipt; not found, the next Effect
// charges.
func InvoiceHandler(g Gateway) leasehold.Handler {
	return func(ctx context.Context, r *leasehold.RunHandle) error {
		var inv Invoice
		if err := json.Unmarshal(r.Payload, &inv); err != nil {
			return err
		}
		charge := func(ctx context.Context, tok leasehold.EffectToken) ([]byte, error) {
			receipt, err := g.Charge(ctx, tok.IdempotencyKey, inv.Cents)
			if err != nil {
				return nil, err
			}
			return json.Marshal(receipt)
		}
		out, err := r.Effect(ctx, "charge", 10*time.Second, charge)
		var unc *leasehold.UncertainEffectError
		if errors.As(err, &unc) {
			receipt, found, lerr := g.Lookup(ctx, fmt.Sprintf("%d:%s", r.ID, "charge"))
			if lerr != nil {
				return lerr
			}
			var result []byte
			if found {
				result, _ = json.Marshal(receipt)
			}
			if err := r.ResolveEffect(ctx, "charge", found, result); err != nil {
				return err
			}
			out, err = r.Effect(ctx, "charge", 10*time.Second, charge)
		}
		if err != nil {
			return err
		}
		return r.SetResult(out)
	}
}

// memGateway is an in-memory gateway: charges by idempotency key, once.
type memGateway struct {
	mu      sync.Mutex
	charges map[string]string
}

func newMemGateway() *memGateway { return &memGateway{charges: map[string]string{}} }

func (g *memGateway) Charge(_ context.Context, key string, cents int) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r, ok := g.charges[key]; ok {
		return r, nil
	}
	r := fmt.Sprintf("rcpt-%d-%d", len(g.charges)+1, cents)
	g.charges[key] = r
	return r, nil
}

func (g *memGateway) Lookup(_ context.Context, key string) (string, bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r, ok := g.charges[key]
	return r, ok, nil
}

// open opens the store and the client, and creates the orders table.
func open(ctx context.Context, path string) (*leasehold.Client, *sqlite.Driver, error) {
	d, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		return nil, nil, err
	}
	c, err := leasehold.NewClient(ctx, d, leasehold.Config{})
	if err != nil {
		return nil, nil, err
	}
	tx, err := d.BeginTx(ctx)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, cents INTEGER NOT NULL)`); err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, d, tx.Commit()
}

func run(ctx context.Context, path string, out io.Writer) error {
	c, d, err := open(ctx, path)
	if err != nil {
		return err
	}
	defer c.Close()
	tx, err := d.BeginTx(ctx)
	if err != nil {
		return err
	}
	if err := PlaceOrder(ctx, c, tx, 1, 4200); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	w, err := c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"invoice": 1}, Manual: true})
	if err != nil {
		return err
	}
	w.Handle("invoice", InvoiceHandler(newMemGateway()))
	if err := w.Start(ctx); err != nil {
		return err
	}
	defer w.Stop(context.WithoutCancel(ctx))
	r, err := w.WorkOne(ctx, "invoice")
	if err != nil {
		return err
	}
	if r == nil {
		return errors.New("no invoice run was due")
	}
	fmt.Fprintf(out, "order 1: invoice run %d %s, receipt %s\n", r.ID, r.State, r.Result)
	return nil
}
