package server_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// TestDashboardRunsPageWeight100k (Must show 3 of the dashboard issue):
// the runs page's weight and time to first render with 100,000 runs in
// the store (SQLite, the default), on the first page, a page deep in the
// table, the last page and a filtered page — measured in headless
// Chromium with the Navigation and Resource Timing APIs. Pagination keeps
// the weight flat (asserted: the deep pages weigh what the first does);
// the times are reported, not asserted, since the machine they run on is
// shared. Enqueueing the runs takes a while, so it runs only when asked:
//
//	LEASEHOLD_DASHBOARD_100K=1 go test -count=1 -v -run TestDashboardRunsPageWeight100k ./server/
func TestDashboardRunsPageWeight100k(t *testing.T) {
	if os.Getenv("LEASEHOLD_DASHBOARD_100K") == "" {
		t.Skip("set LEASEHOLD_DASHBOARD_100K=1 to measure the runs page with 100,000 runs (about a minute)")
	}
	const total, batch = 100_000, 1000
	ctx := browser(t)
	b := setup(t, stores[0].open, leasehold.Config{}, server.Config{})
	start := time.Now()
	queues := []string{"mail", "bills", "reports"}
	for i := 0; i < total; i += batch {
		rs := make([]leasehold.Enqueue, batch)
		for j := range rs {
			rs[j] = leasehold.Enqueue{Queue: queues[(i+j)%len(queues)], Payload: []byte(fmt.Sprintf(`{"n":%d}`, i+j))}
		}
		_, err := b.c.Enqueue(context.Background(), rs...)
		require.NoError(t, err)
	}
	t.Logf("enqueued %d runs in %v", total, time.Since(start).Round(time.Millisecond))

	type timing struct {
		HTML, Assets, API, Decoded float64 // bytes on the wire (HTML, CSS+JS, API JSON) and decoded in all
		FCP, Ready, Counted        float64 // ms from navigation start: first contentful paint, the rows drawn, the counts drawn
		Stats, List                float64 // ms: the two API calls (the counts' grouped scan, the page of runs)
		Rows                       int
	}
	measure := func(path string) timing {
		t.Helper()
		// A fresh tab each time: its own navigation timing. The token is
		// set on /healthz (same origin, no assets), so the first page is
		// loaded cold; the HTTP cache is the profile's, so later pages
		// revalidate the assets (304), which is what a person paging sees.
		tb := tab(t, ctx)
		do(t, tb, "setting the token", chromedp.Navigate(b.url+"/healthz"))
		eval[bool](t, tb, fmt.Sprintf(`sessionStorage.setItem("leasehold.token", %q), true`, b.token))
		do(t, tb, "loading "+path, chromedp.Navigate(b.url+path), visible(`body[data-ready="runs"]`))
		return eval[timing](t, tb, `(() => {
			const nav = performance.getEntriesByType("navigation")[0];
			const res = performance.getEntriesByType("resource");
			const sum = (f) => res.filter(f).reduce((a, r) => a + r.transferSize, 0);
			const fcp = performance.getEntriesByName("first-contentful-paint")[0];
			return {HTML: nav.transferSize, Assets: sum(r => r.name.includes("/ui/assets/")), API: sum(r => r.name.includes("/v1/")),
				Decoded: nav.decodedBodySize + res.reduce((a, r) => a + r.decodedBodySize, 0),
				FCP: fcp ? fcp.startTime : -1, Ready: performance.getEntriesByName("leasehold:rows")[0].startTime,
				Counted: performance.getEntriesByName("leasehold:counts")[0].startTime,
				Stats: res.find(r => r.name.includes("/v1/stats/runs")).duration, List: res.find(r => r.name.includes("/v1/runs?")).duration,
				Rows: document.querySelectorAll("#runs tbody tr[data-run]").length};
		})()`)
	}
	pages := []string{"/", "/?after=50000", "/?after=99950", "/?queue=bills&after=60000", "/?state=running"}
	var first timing
	for i, p := range pages {
		m := measure(p)
		t.Logf("%-5s %-28s rows %3d  html %5.0f B  assets %5.0f B  api %6.0f B  decoded %6.0f B  first paint %6.1f ms  rows drawn %6.1f ms (page call %5.1f ms)  counts drawn %6.1f ms (counts call %6.1f ms)",
			map[bool]string{true: "cold", false: "warm"}[i == 0], p, m.Rows, m.HTML, m.Assets, m.API, m.Decoded, m.FCP, m.Ready, m.List, m.Counted, m.Stats)
		switch i {
		case 0:
			first = m
			require.Equal(t, 50, m.Rows)
		case 1, 3:
			require.Equal(t, 50, m.Rows, p)
			require.InDelta(t, first.API, m.API, first.API*0.1, "%s: a deep page weighs what the first does", p)
		}
	}
}
