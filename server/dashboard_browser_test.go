package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// The dashboard in a real browser: headless Chromium (Debian's chromium)
// driven by chromedp against a server on a real loopback listener. Every
// wait is on a DOM condition (WaitVisible, Poll), never a sleep; the whole
// browser session is bounded by browserBudget.

const browserBudget = 120 * time.Second

// chromium is the system browser's path. Outside CI a missing browser
// skips, loudly; under CI=true it fails (.ci/run installs it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed: the dashboard's browser tests need it under CI (apt-get install chromium)")
	}
	const msg = "SKIPPED: no chromium on PATH, so the dashboard's browser tests did not run — apt-get install -y chromium"
	fmt.Fprintf(os.Stderr, "%s: %s\n", t.Name(), msg) // seen without -v too
	t.Skip(msg)
	return ""
}

// browser starts headless Chromium with a fresh profile and returns a
// context for its first tab, bounded by browserBudget.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), browserBudget)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	require.NoError(t, chromedp.Do(bctx)) // start the browser now: a failure to start is its own error
	return bctx
}

// tab opens another tab of the browser: its own sessionStorage, so its
// own token.
func tab(t *testing.T, browserCtx context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	return ctx
}

// shots is where the screenshots go: kept after the test (their paths are
// logged) so a person can look at them.
type shots struct {
	dir string
	n   int
}

func newShots(t *testing.T) *shots {
	t.Helper()
	dir, err := os.MkdirTemp("", "leasehold-dashboard-"+strings.ReplaceAll(t.Name(), "/", "-")+"-")
	require.NoError(t, err)
	t.Logf("screenshots in %s", dir)
	return &shots{dir: dir}
}

func (s *shots) take(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	s.n++
	p := filepath.Join(s.dir, fmt.Sprintf("%02d-%s.png", s.n, name))
	require.NoError(t, os.WriteFile(p, png, 0o644))
	t.Logf("screenshot %s", p)
}

// do runs browser steps, failing the test with what was being done.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, steps...), what)
}

func eval[T any](t *testing.T, ctx context.Context, js string, opts ...chromedp.EvaluateOption) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, opts...))
	require.NoError(t, err, js)
	return v
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	require.NoError(t, err, sel)
	return v
}

// waitJS waits until the expression is true in the page.
func waitJS(js string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))(ctx, tg)
		return err
	})
}

func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}

// login signs a tab in with token and waits for the runs page.
func login(t *testing.T, ctx context.Context, url, token string) {
	t.Helper()
	do(t, ctx, "signing in",
		chromedp.Navigate(url+"/ui/login"),
		visible("#token"),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS("#login-submit")),
		visible(`body[data-ready="runs"]`),
	)
}

// TestDashboardInBrowser (Must show 1 and 2 of the dashboard issue): a
// server with real data on SQLite; an admin signs in and sees the counts,
// a run whose events arrive while it runs, the live leases' runway bar
// draining, a world whose audit strip puts the handoffs where the journal
// has them, and cancels a run after confirming; a token with no scope on
// the data sees nothing; a read token gets no mutating control, and the
// API refuses the action when the page sends it anyway.
//
// It runs on both stores: on Postgres the events reach the stream through
// LISTEN/NOTIFY, on SQLite through the process's own commit signal.
func TestDashboardInBrowser(t *testing.T) {
	t.Parallel()
	eachStore(t, dashboardInBrowser)
}

func dashboardInBrowser(t *testing.T, open func(t *testing.T) leasehold.Driver) {
	chromium(t)
	b := setup(t, open, leasehold.Config{}, server.Config{})
	// The browser after the server: cleanups run last-first, so the
	// browser (and its open event streams) is gone before the server closes.
	ctx := browser(t)
	d := dashboardFixture(t, b)
	wk, err := b.c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"edge": 1}, Mode: leasehold.ModeDark})
	require.NoError(t, err)
	require.NoError(t, b.s.AttachWorker("edge-1", wk))
	sh := newShots(t)
	login(t, ctx, b.url, b.token)

	// Queues and runs: the counts by state (drawn after the list, which
	// does not wait for them), and the list.
	do(t, ctx, "waiting for the counts", visible(`#counts-note`), waitJS(`document.querySelector("#counts").dataset.loaded === "yes"`))
	require.Equal(t, "2", text(t, ctx, `#counts td[data-queue="mail"][data-state="available"]`))
	require.Equal(t, "1", text(t, ctx, `#counts td[data-queue="mail"][data-state="running"]`))
	require.Equal(t, "3", text(t, ctx, `#counts td[data-queue="mail"][data-state="total"]`))
	require.Equal(t, "1", text(t, ctx, `#counts td[data-queue="bills"][data-state="available"]`))
	require.Equal(t, 4, eval[int](t, ctx, `document.querySelectorAll("#runs tbody tr[data-run]").length`))
	sh.take(t, ctx, "runs")
	do(t, ctx, "filtering by queue and state",
		chromedp.Navigate(b.url+"/?queue=mail&state=running"), visible(`body[data-ready="runs"]`))
	require.Equal(t, []int64{d.held.ID}, eval[[]int64](t, ctx, `[...document.querySelectorAll("#runs tbody tr[data-run]")].map(r => +r.dataset.run)`))

	// The owner filter (the runs worker-1 holds) and the search by unique
	// key, typed into the form as a person would.
	listed := func() []int64 {
		return eval[[]int64](t, ctx, `[...document.querySelectorAll("#runs tbody tr[data-run]")].map(r => +r.dataset.run)`)
	}
	do(t, ctx, "filtering by owner", chromedp.Navigate(b.url+"/?owner=worker-1"), visible(`body[data-ready="runs"]`))
	require.Equal(t, []int64{d.held.ID}, listed())
	require.Equal(t, "worker-1", eval[string](t, ctx, `document.querySelector("#f-owner").value`), "the form shows the filter back")
	var keyedReply enqueued
	b.post(t, "/v1/runs", map[string]any{"runs": []map[string]any{{"queue": "bills", "payload": json.RawMessage(`{}`), "unique_key": "invoice-42"}}}).ok(t, &keyedReply)
	keyed := keyedReply.Runs[0].Run
	do(t, ctx, "searching by unique key", chromedp.Navigate(b.url+"/"), visible(`body[data-ready="runs"]`),
		chromedp.SendKeys(chromedp.CSS("#s-key"), "invoice-42"), chromedp.Click(chromedp.CSS(`#search-key button`)),
		// The unfiltered page lists the keyed run too: wait for the
		// search's own page (the server renders the key back into the
		// input's value attribute; typing sets only the property), not
		// for the row.
		visible(`#s-key[value="invoice-42"]`), visible(`body[data-ready="runs"]`),
		visible(fmt.Sprintf(`#runs tr[data-run="%d"]`, keyed.ID)))
	require.Equal(t, "?unique_key=invoice-42", eval[string](t, ctx, `location.search`))
	require.Equal(t, []int64{keyed.ID}, listed())
	sh.take(t, ctx, "runs-by-unique-key")

	// A run's page: its figures, its effect, and its events arriving live.
	do(t, ctx, "opening the held run",
		chromedp.Navigate(fmt.Sprintf("%s/ui/runs/%d", b.url, d.held.ID)),
		visible(`body[data-ready="run"]`),
		visible(`#events tr[data-seq="2"]`))
	require.Equal(t, "running", text(t, ctx, `#run dd[data-field="state"]`))
	require.Equal(t, "worker-1", text(t, ctx, `#run dd[data-field="owner"]`))
	require.Equal(t, fmt.Sprint(d.held.Fence), text(t, ctx, `#run dd[data-field="fence"]`))
	require.Equal(t, "committed", text(t, ctx, `#effects tr[data-key="send"] td:nth-child(3)`))
	// The events come over the SSE stream, not by polling: the page says
	// the stream is open, and it never asked the paged events endpoint.
	do(t, ctx, "waiting for the event stream", visible(`body[data-events="live"]`))
	b.emit(t, d.held, 3, "almost-done") // the runner emits while the page is open
	do(t, ctx, "waiting for the new event", visible(`#events tr[data-seq="3"]`))
	require.Equal(t, "almost-done", text(t, ctx, `#events tr[data-seq="3"] td:nth-child(3)`))
	require.Equal(t, 3, eval[int](t, ctx, `document.querySelectorAll("#events tbody tr[data-seq]").length`), "each event once")
	require.Zero(t, eval[int](t, ctx, `performance.getEntriesByType("resource").filter(r => /\/events\?/.test(r.name)).length`), "the page polled the events")
	sh.take(t, ctx, "run-live-events")

	// Live leases: the held run's durable runway, draining between two
	// screenshots and refilled by a confirmed renewal.
	do(t, ctx, "opening the leases", chromedp.Navigate(b.url+"/ui/leases"), visible(`body[data-ready="leases"]`))
	bar := fmt.Sprintf(`#leases tr[data-run="%d"] .bar`, d.held.ID)
	first := eval[int64](t, ctx, `+document.querySelector('`+bar+`').getAttribute("aria-valuenow")`)
	max := eval[int64](t, ctx, `+document.querySelector('`+bar+`').getAttribute("aria-valuemax")`)
	require.Positive(t, first)
	require.LessOrEqual(t, first, max)
	sh.take(t, ctx, "leases-1")
	do(t, ctx, "waiting for the runway to drain",
		waitJS(fmt.Sprintf(`+document.querySelector('%s').getAttribute("aria-valuenow") < %d`, bar, first)))
	sh.take(t, ctx, "leases-2")
	drained := eval[int64](t, ctx, `+document.querySelector('`+bar+`').getAttribute("aria-valuenow")`)
	b.post(t, runPath(d.held.ID, "/renew"), map[string]any{"fence": d.held.Fence, "owner": "worker-1"}).ok(t, &struct{}{})
	do(t, ctx, "waiting for the renewal to refill the runway",
		waitJS(fmt.Sprintf(`+document.querySelector('%s').getAttribute("aria-valuenow") > %d`, bar, drained)))
	// The charts: the lag histogram counts every lease shown, and the
	// runway over time of the held run's lease drained and then rose with
	// the renewal.
	do(t, ctx, "waiting for the runway chart to show the refill", waitJS(`(() => {
		const v = (document.querySelector("#runway-svg polyline")?.dataset.values || "").split(" ").map(Number);
		return v.some((x, i) => i > 0 && x > v[i - 1]);
	})()`))
	require.Equal(t, fmt.Sprintf("%d/%d", d.held.ID, d.held.Fence), eval[string](t, ctx, `document.querySelector("#runway-lease").value`))
	require.Equal(t, eval[int](t, ctx, `document.querySelectorAll("#leases tr[data-lease]").length`),
		eval[int](t, ctx, `[...document.querySelectorAll("#lag-svg rect[data-n]")].reduce((a, r) => a + +r.dataset.n, 0)`), "the histogram counts each lease once")
	require.Equal(t, 6, eval[int](t, ctx, `document.querySelectorAll("#lag-svg rect[data-bin]").length`))
	sh.take(t, ctx, "leases-3-renewed")

	// Worlds: the list, a world's head, and its audit strip.
	do(t, ctx, "opening the worlds", chromedp.Navigate(b.url+"/ui/worlds"), visible(`#worlds tr[data-world="w1"]`))
	require.Equal(t, "home", text(t, ctx, `#worlds tr[data-world="w1"] .band`))
	do(t, ctx, "opening world w1",
		chromedp.Click(chromedp.CSS(`#worlds tr[data-world="w1"] a`)), visible(`body[data-ready="world"]`),
		visible(`#journal tr[data-position]`))
	require.Equal(t, "node-h", text(t, ctx, `#head dd[data-field="holder"]`))
	require.Equal(t, "3", text(t, ctx, `#head dd[data-field="epoch"]`))
	do(t, ctx, "running the audit", chromedp.Click(chromedp.CSS("#audit-run")), visible(".strip .seg"))
	type seg struct{ Epoch, From, To int64 }
	segs := eval[[]seg](t, ctx, `[...document.querySelectorAll(".strip .seg")].map(s => ({Epoch: +s.dataset.epoch, From: +s.dataset.from, To: +s.dataset.to}))`)
	require.Len(t, segs, 3)
	require.Equal(t, []int64{1, 2, 3}, []int64{segs[0].Epoch, segs[1].Epoch, segs[2].Epoch})
	require.Equal(t, d.handoff, []int64{segs[1].From, segs[2].From}, "the strip starts each epoch at its handoff's position")
	require.Equal(t, int64(1), segs[0].From)
	require.Contains(t, text(t, ctx, "#audit-verdict"), "Verified")
	sh.take(t, ctx, "world-audit")

	require.Equal(t, "home", text(t, ctx, `#head dd[data-field="band"]`))

	// The journal tail streams: entries appended while the page is open
	// appear without a reload, and the page never polls the journal.
	do(t, ctx, "waiting for the journal stream", visible(`body[data-journal="live"]`))
	var head worldReply
	b.get(t, worldPath("w1", "")).ok(t, &head)
	var appended struct{ Positions []int64 }
	b.post(t, worldPath("w1", "/append"), map[string]any{"holder": "node-h", "epoch": 3, "seen_position": head.World.GrantedAt,
		"entries": entries(`{"n":4}`, `{"n":5}`)}).ok(t, &appended)
	require.Len(t, appended.Positions, 2)
	do(t, ctx, "waiting for the appended entries", visible(fmt.Sprintf(`#journal tr[data-position="%d"]`, appended.Positions[1])))
	require.Equal(t, appended.Positions[1], eval[int64](t, ctx, `+document.querySelector("#journal tbody tr").dataset.position`), "newest first")
	require.Zero(t, eval[int](t, ctx, `performance.getEntriesByType("resource").filter(r => /\/journal\?/.test(r.name)).length`), "the page polled the journal")
	sh.take(t, ctx, "world-journal-live")

	// Health: the throughput chart drawn from the server's ring (the
	// fixture's enqueues and claim went through the API), the store clock
	// quiet, and the attached worker's heartbeat mode with its dark-mode
	// difference counts.
	do(t, ctx, "opening the health page", chromedp.Navigate(b.url+"/ui/health"), visible(`body[data-ready="health"]`),
		visible(`#rate-svg polyline[data-series="claimed"]`), visible(`#modes tr[data-worker="edge-1"]`))
	require.GreaterOrEqual(t, eval[int](t, ctx, `+document.querySelector('#rate-svg polyline[data-series="enqueued"]').dataset.total`), 4)
	require.GreaterOrEqual(t, eval[int](t, ctx, `+document.querySelector('#rate-svg polyline[data-series="claimed"]').dataset.total`), 1)
	require.Equal(t, 60, eval[int](t, ctx, `document.querySelector('#rate-svg polyline[data-series="claimed"]').getAttribute("points").split(" ").length`))
	require.Equal(t, "within bounds", text(t, ctx, `#clock dd[data-field="state"]`))
	require.Equal(t, "dark", text(t, ctx, `#modes tr[data-worker="edge-1"] .mode`))
	require.Equal(t, "0", text(t, ctx, `#modes tr[data-worker="edge-1"] td:nth-child(3)`))
	// The clock doctor's figures (the store sampled by the server on this
	// view), the pools' saturation and the alerts.
	do(t, ctx, "waiting for the clock doctor", visible(`body[data-doctor="done"]`), visible(`#alerts li`))
	require.Contains(t, text(t, ctx, `#doctor dd[data-field="rtt"]`), "median")
	require.Contains(t, text(t, ctx, `#doctor dd[data-field="offset"]`), "ms ± ")
	require.Equal(t, "none", text(t, ctx, `#doctor dd[data-field="steps"]`))
	require.Equal(t, "none", eval[string](t, ctx, `document.querySelector("#alerts li").dataset.level`), "a quiet server raises no alert")
	if b.c.Driver().Name() == "postgres" {
		require.Equal(t, 2, eval[int](t, ctx, `document.querySelectorAll("#pools tr[data-pool] [role=meter]").length`), "Postgres's critical and general pools")
	} else {
		do(t, ctx, "SQLite has no pool", visible(`#pools-none`))
	}
	sh.take(t, ctx, "health")

	// An admin action asks first, and only "yes" acts.
	victim := d.mail[1]
	do(t, ctx, "asking to cancel", chromedp.Navigate(fmt.Sprintf("%s/ui/runs/%d", b.url, victim.ID)),
		visible(`body[data-ready="run"]`), chromedp.Click(chromedp.CSS("#act-cancel")), visible("#confirm-yes"))
	require.Equal(t, "available", b.runState(t, victim.ID), "nothing is sent before the confirmation")
	sh.take(t, ctx, "confirm-cancel")
	do(t, ctx, "confirming", chromedp.Click(chromedp.CSS("#confirm-yes")),
		waitJS(`document.querySelector('#run dd[data-field="state"]').textContent === "cancelled"`))
	require.Equal(t, "cancelled", b.runState(t, victim.ID))

	// A cancelled run offers a retry; it too asks first.
	do(t, ctx, "asking to retry", visible("#act-retry"), chromedp.Click(chromedp.CSS("#act-retry")), visible("#confirm-yes"))
	sh.take(t, ctx, "confirm-retry")
	require.Equal(t, "cancelled", b.runState(t, victim.ID), "nothing is sent before the confirmation")
	do(t, ctx, "confirming the retry", chromedp.Click(chromedp.CSS("#confirm-yes")),
		waitJS(`document.querySelector('#run dd[data-field="state"]').textContent === "available"`))
	require.Equal(t, "available", b.runState(t, victim.ID))
	require.Zero(t, eval[int](t, ctx, `document.querySelectorAll("#act-retry").length`), "an available run offers no retry")

	// An uncertain effect: an intent whose holder failed before its
	// commit, met by the next holder. The admin resolves it (it did not
	// happen) after confirming; the intent is gone.
	pay := b.enqueue(t, "pay", `{}`)
	before := b.claimOne(t, "pay", "worker-2")
	b.post(t, runPath(pay.ID, "/effects/begin"), map[string]any{"key": "charge", "fence": before.Fence, "owner": "worker-2", "max_duration_ms": 1000}).ok(t, &struct{}{})
	b.post(t, runPath(pay.ID, "/fail"), map[string]any{"fence": before.Fence, "reason": "crashed mid-effect", "retry_after_ms": 0}).ok(t, &runBody{})
	second := b.claimOne(t, "pay", "worker-3")
	require.Greater(t, second.Fence, before.Fence)
	do(t, ctx, "opening the run with an uncertain effect", chromedp.Navigate(fmt.Sprintf("%s/ui/runs/%d", b.url, pay.ID)),
		visible(`#effects tr[data-key="charge"] .act-resolve`))
	require.Equal(t, "uncertain", text(t, ctx, `#effects tr[data-key="charge"] td:nth-child(3)`))
	sh.take(t, ctx, "uncertain-effect")
	do(t, ctx, "resolving it", chromedp.Click(chromedp.CSS(`#effects tr[data-key="charge"] .act-resolve:nth-child(2)`)),
		visible("#confirm-yes"), chromedp.Click(chromedp.CSS("#confirm-yes")), chromedp.WaitNotPresent(chromedp.CSS(`#effects tr[data-key="charge"]`)))
	var ledger struct{ Effects []struct{ Key string } }
	b.get(t, runPath(pay.ID, "/effects")).ok(t, &ledger)
	require.Empty(t, ledger.Effects, "resolved as not happened: the intent is removed")

	// A narrow screen (a phone's 390 px): nothing wider than the window
	// but the tables, which scroll in their own box; and the keyboard's
	// first stop is the skip link.
	do(t, ctx, "narrowing the window", chromedp.EmulateViewport(390, 844), chromedp.Navigate(b.url+"/"),
		visible(`body[data-ready="runs"]`), chromedp.KeyEvent("\t"))
	require.LessOrEqual(t, eval[int](t, ctx, `document.documentElement.scrollWidth`), 390, "the page scrolls sideways on a narrow screen")
	require.Equal(t, "skip", eval[string](t, ctx, `document.activeElement.className`))
	sh.take(t, ctx, "narrow-runs")
	for _, pg := range []string{"leases", "health"} { // the new charts, tables and forms fit too
		do(t, ctx, "opening "+pg+" narrow", chromedp.Navigate(b.url+"/ui/"+pg), visible(`body[data-ready="`+pg+`"]`), visible(".chart svg"))
		require.LessOrEqual(t, eval[int](t, ctx, `document.documentElement.scrollWidth`), 390, "%s scrolls sideways on a narrow screen", pg)
	}
	sh.take(t, ctx, "narrow-health")

	// Must show 2: a token with no scope on the data sees nothing.
	nobody := tab(t, ctx)
	login(t, nobody, b.url, b.mint(t, "read:queue:zzz"))
	do(t, nobody, "waiting for the counts", waitJS(`document.querySelector("#counts").dataset.loaded === "yes"`))
	require.Equal(t, "No runs this token may read.", text(t, nobody, "#counts-note"))
	require.Equal(t, 0, eval[int](t, nobody, `document.querySelectorAll("#counts tbody tr").length`))
	require.Equal(t, 0, eval[int](t, nobody, `document.querySelectorAll("#runs tbody tr[data-run]").length`))
	require.Contains(t, text(t, nobody, "#status"), "may not read these runs")
	do(t, nobody, "opening a run without the scope", chromedp.Navigate(fmt.Sprintf("%s/ui/runs/%d", b.url, d.held.ID)),
		waitJS(`document.querySelector("#status").textContent.includes("may not read")`))
	require.Equal(t, 0, eval[int](t, nobody, `document.querySelectorAll("#run dd").length`))
	sh.take(t, nobody, "no-scope")

	// A read token sees the run but no control, and the API refuses the
	// action when the page sends it anyway.
	reader := tab(t, ctx)
	// (signing in through a login link whose next would leave the site:
	// it lands on the dashboard's own runs page instead)
	do(t, reader, "signing in", chromedp.Navigate(b.url+`/ui/login?next=%2F%5Cevil.example%2F`), visible("#token"),
		chromedp.SendKeys(chromedp.CSS("#token"), b.mint(t, "read")), chromedp.Click(chromedp.CSS("#login-submit")),
		visible(`body[data-ready="runs"]`))
	require.Equal(t, b.url+"/", eval[string](t, reader, `location.href`))
	target := d.mail[2]
	do(t, reader, "opening a run read-only", chromedp.Navigate(fmt.Sprintf("%s/ui/runs/%d", b.url, target.ID)),
		visible(`body[data-ready="run"]`))
	require.Equal(t, "available", text(t, reader, `#run dd[data-field="state"]`))
	require.Equal(t, 0, eval[int](t, reader, `document.querySelectorAll("#actions button, .act-resolve").length`))
	b.post(t, runPath(d.bills.ID, "/cancel"), map[string]any{"reason": "op"}).ok(t, &runBody{})
	do(t, reader, "opening a cancelled run read-only", chromedp.Navigate(fmt.Sprintf("%s/ui/runs/%d", b.url, d.bills.ID)),
		visible(`body[data-ready="run"]`))
	require.Equal(t, "cancelled", text(t, reader, `#run dd[data-field="state"]`))
	require.Zero(t, eval[int](t, reader, `document.querySelectorAll("#actions button").length`), "a read token is offered no retry")
	retryStatus := eval[int](t, reader, fmt.Sprintf(`fetch("/v1/runs/%d/retry", {method: "POST", headers: {"Authorization": "Bearer " + sessionStorage.getItem("leasehold.token"), "Content-Type": "application/json"}, body: "{}"}).then(r => r.status)`, d.bills.ID), chromedp.EvalAwaitPromise)
	require.Equal(t, 403, retryStatus)
	require.Equal(t, "cancelled", b.runState(t, d.bills.ID), "the refused retry changed nothing")
	status := eval[int](t, reader, fmt.Sprintf(`fetch("/v1/runs/%d/cancel", {method: "POST", headers: {"Authorization": "Bearer " + sessionStorage.getItem("leasehold.token"), "Content-Type": "application/json"}, body: "{}"}).then(r => r.status)`, target.ID), chromedp.EvalAwaitPromise)
	require.Equal(t, 403, status)
	require.Equal(t, "available", b.runState(t, target.ID), "the refused cancel changed nothing")
	sh.take(t, reader, "read-only")
}

// runState reads a run's state through the API.
func (b *testBundle) runState(t *testing.T, id int64) string {
	t.Helper()
	var r runBody
	b.get(t, runPath(id, "")).ok(t, &r)
	return r.Run.State
}
