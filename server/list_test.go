package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// TestListingPagesWithACursor: GET /v1/runs pages by id with next as the
// cursor, filters by queue and state, and refuses bad filters typed.
func TestListingPagesWithACursor(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		var ids []int64
		for range 5 {
			ids = append(ids, b.enqueue(t, "a", `{}`).ID)
		}
		b.enqueue(t, "b", `{}`)
		held := b.claimOne(t, "a", "o")

		type page struct {
			Runs []run  `json:"runs"`
			Next string `json:"next"`
		}
		var got []int64
		path := "/v1/runs?queue=a&limit=2"
		pages := 0
		for {
			var p page
			b.get(t, path).ok(t, &p)
			pages++
			for _, r := range p.Runs {
				got = append(got, r.ID)
			}
			if p.Next == "" {
				break
			}
			path = "/v1/runs?queue=a&limit=2&after=" + p.Next
		}
		require.Equal(t, ids, got)
		require.Equal(t, 3, pages)

		var p page
		b.get(t, "/v1/runs?state=running").ok(t, &p)
		require.Len(t, p.Runs, 1)
		require.Equal(t, held.ID, p.Runs[0].ID)
		require.Empty(t, p.Next)

		b.get(t, "/v1/runs?state=sleeping").problem(t, "invalid")
		b.get(t, "/v1/runs?limit=1001").problem(t, "invalid")
		b.get(t, "/v1/runs?after=x").problem(t, "invalid")
		b.get(t, "/v1/runs?after=-1").problem(t, "invalid")
		b.get(t, "/v1/runs?queue=a%20b").problem(t, "invalid")
	})
}
