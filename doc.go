// Package leasehold gives work exactly one owner at a time, provably, on
// Postgres or embedded SQLite: fenced leases whose epoch is checked by the
// store inside every correctness write.
//
// The user picks the store and passes its driver in, so a program links
// only the driver it uses (a SQLite-only binary carries no pgx):
//
//	d, err := sqlite.Open(ctx, sqlite.Config{Path: "leasehold.db"}) // or postgres.Open(ctx, postgres.Config{URL: …})
//	c, err := leasehold.NewClient(ctx, d, leasehold.Config{})         // migrates; c.Close closes d
//
// Worlds are a single-writer, append-only journal of record per world with
// the lease inside the journal. The lease state is a
// pure fold of the journal (package journal), every lease change is a
// conditional write of the store (the store is the grantor), and an append
// is accepted only if, inside the store's transaction, its epoch and holder
// are current, the lease is unexpired on the store's clock and the holder
// has replayed the journal through its own grant:
//
//	w, err := c.CreateWorld(ctx, "orders", "home-1")   // epoch 1, held by home-1
//	pos, err := c.Append(ctx, leasehold.AppendParams{World: "orders", Holder: "home-1",
//		Epoch: w.Epoch, SeenPosition: w.GrantedAt, Kind: "order.placed", Payload: []byte(`{"id":7}`)})
//	w, err = c.Handoff(ctx, "orders", "home-1", "node-a", w.Epoch) // epoch 2, held by node-a
//	_, err = c.Append(ctx, ...Epoch: 1...)                         // errors.Is(err, leasehold.ErrFenced)
//	rep, err := c.Audit(ctx, "orders")                             // who held the lease at every position
//
// Concurrent appends to one world are group-committed: they share one
// transaction and one fsync, and each is acknowledged only once durable.
//
// Runs are the second face over the same lease core: Enqueue, then a
// Worker claims runs in batches under fenced leases, renews them
// write-behind, passes every RunHandle.Effect through the side-effect gate,
// records effects idempotently (ErrUncertain when one may have happened
// without being committed), emits ordered events and completes with a
// fenced write. See docs/design/fencing.md for the argument.
//
// Queues are controlled cluster-wide through the store: PauseQueue and
// ResumeQueue, and SetQueueLimits for a global concurrency limit and a
// rate limit, both enforced in every worker's claim statement
// (docs/design/queue-control.md); Queues lists them with their runs by
// state.
package leasehold
