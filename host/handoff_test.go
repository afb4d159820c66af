package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/journal"
)

// TestCommandsThroughAHandoffAndBackAreAppliedOnce: 8 submitters send
// deposits (and retries of earlier ones) to a world while it is handed
// from its home to a spill node and back; every command is acknowledged,
// every key is journaled exactly once, by the holder of its position, and
// the ledger balances.
func TestCommandsThroughAHandoffAndBackAreAppliedOnce(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		home := newHost(t, d, "home-1", programs.Bank{})
		spill := newHost(t, d, "spill-1", programs.Bank{})
		require.NoError(t, home.Create(ctx, "hot"))
		r := host.NewRouter(d, home, spill)

		const submitters, each = 8, 150
		var acked atomic.Int64
		third, twoThirds := make(chan struct{}), make(chan struct{})
		var once1, once2 sync.Once
		var wg sync.WaitGroup
		errs := make(chan error, submitters)
		for s := range submitters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range each {
					cmd := deposit(fmt.Sprintf("s%d", s), n+1)
					if _, err := r.Submit(ctx, "hot", cmd); err != nil {
						errs <- fmt.Errorf("submitter %d, command %d: %w", s, n, err)
						return
					}
					if n >= 5 && n%10 == 0 { // a retry of an earlier command: answered, not applied
						rep, err := r.Submit(ctx, "hot", deposit(fmt.Sprintf("s%d", s), n-4))
						if err != nil || !rep.Duplicate {
							errs <- fmt.Errorf("submitter %d retry of %d: duplicate=%v err=%v", s, n-4, rep.Duplicate, err)
							return
						}
					}
					switch a := acked.Add(1); {
					case a == submitters*each/3:
						once1.Do(func() { close(third) })
					case a == 2*submitters*each/3:
						once2.Do(func() { close(twoThirds) })
					}
				}
			}()
		}
		<-third
		require.NoError(t, r.Handoff(ctx, "hot", "home-1", "spill-1"))
		<-twoThirds
		require.NoError(t, r.Handoff(ctx, "hot", "spill-1", "home-1"))
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}

		es := journalOf(t, d, "hot")
		keys := turnKeys(es)
		require.Len(t, keys, submitters*each)
		for k, n := range keys {
			require.Equal(t, 1, n, "key %s journaled %d times", k, n)
		}
		auditOK(t, es)
		var handoffs []string
		var sum int64
		for _, e := range es {
			switch e.Kind {
			case journal.KindHandedOff:
				handoffs = append(handoffs, e.Holder)
			case host.TurnKind:
				var tr struct {
					E []struct {
						D struct{ N int64 }
					}
				}
				require.NoError(t, json.Unmarshal(e.Payload, &tr))
				for _, ev := range tr.E {
					sum += ev.D.N
				}
			}
		}
		require.Equal(t, []string{"spill-1", "home-1"}, handoffs, "handed to the spill node and back")
		require.Equal(t, int64(submitters*each*(each+1)/2), sum, "every deposit once")

		bal, err := r.Submit(ctx, "hot", host.Command{Key: "final", Payload: json.RawMessage(`{"op":"balance","account":"s3"}`)})
		require.NoError(t, err)
		require.JSONEq(t, fmt.Sprintf(`{"ok":true,"balance":%d}`, each*(each+1)/2), string(bal.Payload))
	})
}
