package scheduler_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/internal/witness"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// book writes the caller's own row inside run.Tx, on either driver.
func book(ctx context.Context, tx any, key string, fence int64) error {
	switch tx := tx.(type) {
	case pgx.Tx:
		_, err := tx.Exec(ctx, "INSERT INTO bookings (k, fence) VALUES ($1, $2)", key, fence)
		return err
	case *sql.Tx:
		_, err := tx.ExecContext(ctx, "INSERT INTO bookings (k, fence) VALUES (?, ?)", key, fence)
		return err
	}
	return fmt.Errorf("unexpected tx %T", tx)
}

// TestReclaimedHolderIsFencedOutAndTheWitnessSeesEachEffectOnce: runner A
// pauses in the middle of an effect past its lease (its own clock stands
// still: its timers, heartbeat included, never fire); the reclaimer returns
// the run and runner B claims it. B sees A's committed effect as done and
// A's unfinished one as uncertain, reconciles it with the witness, and
// completes. When A resumes, its effect commit, Emit (at Step), Tx,
// complete and fail are all refused with ErrFenced and change nothing. The
// witness, outside the ledger, saw each effect once.
func TestReclaimedHolderIsFencedOutAndTheWitnessSeesEachEffectOnce(t *testing.T) {
	t.Parallel()
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			quiet := slog.New(slog.DiscardHandler)
			storeClock := clock.NewFake(t0)
			store, exec := sk.open(t, storeClock)
			require.NoError(t, exec(ctx, "CREATE TABLE bookings (k TEXT PRIMARY KEY, fence BIGINT NOT NULL)"))
			events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: quiet})
			require.NoError(t, events.Start(context.Background()))
			defer events.Stop(context.Background())
			wit := witness.New()
			timing := lease.RunDefaults()
			enq, err := store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", Payload: []byte(`{"order":7}`)}}})
			require.NoError(t, err)
			id := enq[0].Run.ID
			charge := func(ctx context.Context, tok scheduler.EffectToken) ([]byte, error) {
				return []byte(`"ch_1"`), wit.Invoke(tok.IdempotencyKey, tok.Fence)
			}

			// Runner A.
			paused, resume := make(chan struct{}), make(chan struct{})
			var aFence int64
			aErrs := make(chan map[string]error, 1)
			a, err := scheduler.NewWorker(store, events, scheduler.WorkerConfig{Owner: "runner-a",
				Queues: map[string]int{"q": 1}, Clock: clock.NewFake(t0), Logger: quiet, ClockCheck: -1})
			require.NoError(t, err)
			a.Handle("q", func(ctx context.Context, r *scheduler.Run) error {
				aFence = r.Fence
				if _, err := r.Effect(ctx, "charge", time.Second, charge); err != nil {
					return err
				}
				if err := r.Emit(ctx, "charged", nil); err != nil {
					return err
				}
				if err := r.Step(ctx); err != nil {
					return err
				}
				errs := map[string]error{}
				_, errs["effect commit"] = r.Effect(ctx, "email", time.Second, func(ctx context.Context, tok scheduler.EffectToken) ([]byte, error) {
					err := wit.Invoke(tok.IdempotencyKey, tok.Fence)
					close(paused)
					<-resume // paused mid-effect, long past its lease
					return nil, err
				})
				errs["emit"] = r.Emit(ctx, "late", nil)
				if errs["emit"] == nil {
					errs["emit"] = r.Step(ctx)
				}
				errs["tx"] = r.Tx(ctx, "book", func(tx any) error { return book(ctx, tx, "late-a", r.Fence) })
				aErrs <- errs
				return nil
			})
			require.NoError(t, a.Start(ctx))
			<-paused

			// A's lease expires on the store clock; the reclaimer takes the run back.
			storeClock.Advance(timing.Lease + timing.Poll)
			n, err := scheduler.NewReclaimer(store, scheduler.ReclaimerConfig{Clock: storeClock, Logger: quiet}).ReclaimOnce(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n)

			// Runner B claims it and finishes the work.
			bDone := make(chan error, 1)
			b, err := scheduler.NewWorker(store, events, scheduler.WorkerConfig{Owner: "runner-b",
				Queues: map[string]int{"q": 1}, Clock: storeClock, Logger: quiet, ClockCheck: -1})
			require.NoError(t, err)
			uncertain := 0
			b.Handle("q", func(ctx context.Context, r *scheduler.Run) error {
				err := func() error {
					res, err := r.Effect(ctx, "charge", time.Second, charge)
					if err != nil || string(res) != `"ch_1"` {
						return fmt.Errorf("charge: %s, %v", res, err)
					}
					_, err = r.Effect(ctx, "email", time.Second, func(context.Context, scheduler.EffectToken) ([]byte, error) {
						return nil, fmt.Errorf("an uncertain effect must not be re-run silently")
					})
					if !assert.ErrorIs(t, err, scheduler.ErrUncertain) {
						return err
					}
					uncertain++
					// Reconcile with the downstream system, by idempotency key
					// and with this holder's token.
					if err := r.ResolveEffect(ctx, "email", wit.Reconcile(fmt.Sprintf("%d:email", r.ID), r.Fence), nil); err != nil {
						return err
					}
					if _, err := r.Effect(ctx, "email", time.Second, func(ctx context.Context, tok scheduler.EffectToken) ([]byte, error) {
						return nil, wit.Invoke(tok.IdempotencyKey, tok.Fence)
					}); err != nil {
						return err
					}
					if _, err := r.Effect(ctx, "sms", time.Second, func(ctx context.Context, tok scheduler.EffectToken) ([]byte, error) {
						return nil, wit.Invoke(tok.IdempotencyKey, tok.Fence)
					}); err != nil {
						return err
					}
					if err := r.Tx(ctx, "book", func(tx any) error { return book(ctx, tx, "b", r.Fence) }); err != nil {
						return err
					}
					if err := r.Emit(ctx, "done", []byte(`{"by":"b"}`)); err != nil {
						return err
					}
					r.SetResult([]byte(`{"by":"b"}`))
					return r.Step(ctx)
				}()
				bDone <- err
				return err
			})
			require.NoError(t, b.Start(ctx))
			require.NoError(t, <-bDone)
			require.NoError(t, b.Stop(ctx))
			done, err := store.RunGet(ctx, &driver.RunGetParams{ID: id})
			require.NoError(t, err)
			require.Equal(t, runs.StateCompleted, done.State)

			// A resumes: everything it tries is fenced out.
			close(resume)
			errs := <-aErrs
			require.NoError(t, a.Stop(ctx))
			for what, err := range errs {
				require.ErrorIs(t, err, lease.ErrFenced, "A's %s", what)
			}
			_, err = store.RunComplete(ctx, &driver.RunCompleteParams{ID: id, Fence: aFence})
			require.ErrorIs(t, err, lease.ErrFenced, "A's complete")
			_, err = store.RunFail(ctx, &driver.RunFailParams{ID: id, Fence: aFence, Reason: "late"})
			require.ErrorIs(t, err, lease.ErrFenced, "A's fail")
			after, err := store.RunGet(ctx, &driver.RunGetParams{ID: id})
			require.NoError(t, err)
			require.Equal(t, done, after, "A changed nothing")
			require.Equal(t, `{"by":"b"}`, string(after.Result))

			// The witness saw each effect exactly once, all from the
			// holder of the time; B reported the one it could not be sure of.
			require.Equal(t, map[string]int{fmt.Sprintf("%d:charge", id): 1, fmt.Sprintf("%d:email", id): 1,
				fmt.Sprintf("%d:sms", id): 1}, wit.Accepted())
			for _, in := range wit.Invocations() {
				require.True(t, in.Accepted, "%+v", in)
			}
			require.Equal(t, 1, uncertain)
			evs, err := store.RunEventList(ctx, &driver.RunEventListParams{RunID: id})
			require.NoError(t, err)
			var kinds []string
			for _, ev := range evs {
				kinds = append(kinds, fmt.Sprintf("%d:%s", ev.Fence, ev.Kind))
			}
			require.Equal(t, []string{fmt.Sprintf("%d:charged", aFence), fmt.Sprintf("%d:done", done.Fence)}, kinds,
				"A's late event was refused")
			effs, err := store.RunEffectList(ctx, &driver.RunEffectListParams{RunID: id})
			require.NoError(t, err)
			for _, e := range effs {
				require.True(t, e.Committed, e.Key)
			}
		})
	}
}
