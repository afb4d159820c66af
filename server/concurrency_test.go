package server_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// TestConcurrentRunnersOverHTTP: runners racing through the API claim
// every run exactly once and complete it once; enqueues racing on one
// unique key make one run, and every racer is answered with it.
func TestConcurrentRunnersOverHTTP(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		const runs, runners = 60, 6
		items := make([]map[string]any, runs)
		for i := range items {
			items[i] = map[string]any{"queue": "work", "payload": json.RawMessage(strconv.Itoa(i))}
		}
		b.post(t, "/v1/runs", map[string]any{"runs": items}).ok(t, &struct{}{})

		var mu sync.Mutex
		completed := map[int64]string{}
		errs := make(chan error, runners)
		var wg sync.WaitGroup
		for k := range runners {
			wg.Add(1)
			go func() {
				defer wg.Done()
				owner := fmt.Sprintf("runner-%d", k)
				for {
					r, err := b.send("POST", "/v1/runs/claim", []byte(`{"queue":"work","owner":"`+owner+`","limit":4}`))
					if err != nil || r.status != 200 {
						errs <- fmt.Errorf("claim: %v %d %s", err, r.status, r.body)
						return
					}
					var got runsBody
					if err := json.Unmarshal(r.body, &got); err != nil {
						errs <- err
						return
					}
					if len(got.Runs) == 0 {
						return
					}
					for _, run := range got.Runs {
						c, err := b.send("POST", runPath(run.ID, "/complete"), []byte(`{"fence":`+strconv.FormatInt(run.Fence, 10)+`}`))
						if err != nil || c.status != 200 {
							errs <- fmt.Errorf("complete %d: %v %d %s", run.ID, err, c.status, c.body)
							return
						}
						mu.Lock()
						if prev, ok := completed[run.ID]; ok {
							errs <- fmt.Errorf("run %d completed by %s and %s", run.ID, prev, owner)
						}
						completed[run.ID] = owner
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Len(t, completed, runs)

		// Racing enqueues of one unique key: one run, answered to all.
		ids := make(chan int64, runners)
		for range runners {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := b.send("POST", "/v1/runs", []byte(`{"runs":[{"queue":"once","unique_key":"k"}]}`))
				var e enqueued
				if err != nil || r.status != 201 || json.Unmarshal(r.body, &e) != nil {
					ids <- -1
					return
				}
				ids <- e.Runs[0].Run.ID
			}()
		}
		wg.Wait()
		close(ids)
		seen := map[int64]int{}
		for id := range ids {
			seen[id]++
		}
		require.Len(t, seen, 1, "one run for the key: %v", seen)
		for id := range seen {
			require.Positive(t, id)
		}
	})
}
