package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// TestCompleteManyCompletesEachUnderItsFence: POST /v1/runs/complete
// completes the held runs of a batch with their results and reports, by
// index, the completion whose fence is stale — that run unchanged; a
// malformed batch is refused whole, nothing written.
func TestCompleteManyCompletesEachUnderItsFence(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		var held []run
		for range 3 {
			b.enqueue(t, "q", `{}`)
			held = append(held, b.claimOne(t, "q", "w"))
		}
		stale := held[1]
		before := b.snapshot(t, stale.ID)

		for name, body := range map[string]any{
			"empty":         map[string]any{"runs": []any{}},
			"unknown field": map[string]any{"runs": []map[string]any{{"id": held[0].ID, "fence": held[0].Fence, "extra": 1}}},
			"bad result":    map[string]any{"runs": []map[string]any{{"id": held[0].ID, "fence": held[0].Fence}, {"id": held[2].ID, "fence": 0}}},
		} {
			b.post(t, "/v1/runs/complete", body).problem(t, "invalid")
			var got runBody
			b.get(t, runPath(held[0].ID, "")).ok(t, &got)
			require.Equal(t, "running", got.Run.State, name)
		}

		var res struct {
			Completed []int64 `json:"completed"`
			Fenced    []int   `json:"fenced"`
		}
		// A token that may work only other queues completes nothing.
		other := b.as(t, b.mint(t, "work:queue:elsewhere"))
		other.post(t, "/v1/runs/complete", map[string]any{"runs": []map[string]any{{"id": held[0].ID, "fence": held[0].Fence}}}).problem(t, "forbidden")
		var still runBody
		b.get(t, runPath(held[0].ID, "")).ok(t, &still)
		require.Equal(t, "running", still.Run.State, "a forbidden batch wrote nothing")

		b.post(t, "/v1/runs/complete", map[string]any{"runs": []map[string]any{
			{"id": held[0].ID, "fence": held[0].Fence, "result": map[string]int{"n": 0}},
			{"id": stale.ID, "fence": stale.Fence + 1},
			{"id": held[2].ID, "fence": held[2].Fence},
		}}).ok(t, &res)
		require.Equal(t, []int64{held[0].ID, held[2].ID}, res.Completed)
		require.Equal(t, []int{1}, res.Fenced)
		var got runBody
		b.get(t, runPath(held[0].ID, "")).ok(t, &got)
		require.Equal(t, "completed", got.Run.State)
		require.JSONEq(t, `{"n":0}`, string(got.Run.Result))
		require.Equal(t, before, b.snapshot(t, stale.ID), "the stale completion changed nothing")

		b.do(t, http.MethodPost, "/v1/runs/complete", []byte(`{"runs":[`)).problem(t, "invalid")
		small := setup(t, open, leasehold.Config{}, server.Config{MaxBodyBytes: 4096})
		big := []byte(`{"runs":[{"id":1,"fence":1,"result":"` + strings.Repeat("x", 5000) + `"}]}`)
		small.do(t, http.MethodPost, "/v1/runs/complete", big).problem(t, "too-large")
	})
}
