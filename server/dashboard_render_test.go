package server_test

import (
	"testing"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// TestDashboardRunsPageRendersBeforeTheCounts: the runs page's first
// render (its page of runs, body[data-ready="runs"]) does not wait for the
// counts — the one call that scans the whole runs table. The browser holds
// GET /v1/stats/runs (DevTools Fetch interception) while the page loads:
// the rows are drawn and the page is ready with the counts still out; once
// the call is let go, the counts are drawn. No timing is involved: the
// call is held until the test releases it.
func TestDashboardRunsPageRendersBeforeTheCounts(t *testing.T) {
	t.Parallel()
	chromium(t)
	b := setup(t, stores[0].open, leasehold.Config{}, server.Config{})
	ctx := browser(t) // after the server: closed before it
	b.enqueue(t, "mail", `{}`)
	b.enqueue(t, "mail", `{}`)

	tb := tab(t, ctx)
	do(t, tb, "setting the token", chromedp.Navigate(b.url+"/healthz"))
	eval[bool](t, tb, `sessionStorage.setItem("leasehold.token", "`+b.token+`"), true`)
	held := make(chan fetch.RequestID, 4)
	require.NoError(t, chromedp.Listen(tb, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			select {
			case held <- e.RequestID:
			default:
			}
		}
	}))
	_, err := chromedp.Call(tb, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/v1/stats/runs*"}}})
	require.NoError(t, err)

	do(t, tb, "loading the runs page while the counts call is held", chromedp.Navigate(b.url+"/"),
		visible(`body[data-ready="runs"]`), visible(`#runs tr[data-run]`))
	var id fetch.RequestID
	select {
	case id = <-held:
	case <-tb.Done():
		t.Fatal("the counts call was never made")
	}
	require.Equal(t, 2, eval[int](t, tb, `document.querySelectorAll("#runs tbody tr[data-run]").length`), "the rows are drawn")
	require.Empty(t, eval[string](t, tb, `document.querySelector("#counts").dataset.loaded || ""`), "with the counts still out")
	require.Zero(t, eval[int](t, tb, `document.querySelectorAll("#counts tbody tr").length`))

	_, err = chromedp.Call(tb, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id})
	require.NoError(t, err)
	do(t, tb, "waiting for the counts", waitJS(`document.querySelector("#counts").dataset.loaded === "yes"`))
	require.Equal(t, "2", text(t, tb, `#counts td[data-queue="mail"][data-state="available"]`))
}
