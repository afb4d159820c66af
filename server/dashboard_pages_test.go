package server_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// TestDashboardPages: the dashboard's pages over real HTTP on both stores
// — served without a token (they are shells), carrying no data of the
// store, escaping what the query sends back, labelled for assistive
// technology, under a CSP that allows only their own assets; the assets
// served from the binary; a bad page a 404 page.
func TestDashboardPages(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		dashboardFixture(t, b)
		anon := b.anon(t)
		noRedirect := &http.Client{Transport: anon.http.Transport,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

		page := func(path string, status int, marks ...string) string {
			t.Helper()
			resp, err := noRedirect.Get(b.url + path)
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			body := string(raw)
			require.Equal(t, status, resp.StatusCode, "%s: %s", path, body)
			if status == http.StatusOK || status == http.StatusNotFound {
				require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"), path)
				require.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'", path)
				require.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'", path)
			}
			for _, m := range marks {
				require.Contains(t, body, m, path)
			}
			// A shell carries nothing of the store: the data comes from
			// the API under the token's rules.
			require.NotContains(t, body, "ada@example.com", path)
			require.NotContains(t, body, "worker-1", path)
			return body
		}
		page("/", http.StatusOK, `data-page="runs"`, `<label for="f-queue">Queue</label>`, `<label for="f-state">State</label>`,
			`<label for="s-id">Run id</label>`, `aria-current="page"`, `<html lang="en">`, `name="viewport"`, `/ui/assets/app.js`, `href="#main"`)
		body := page("/?queue=%3Cscript%3Ealert(1)%3C/script%3E&state=running&after=40", http.StatusOK, `&lt;script&gt;alert(1)&lt;/script&gt;`,
			`<option value="running" selected>`, `id="first"`)
		require.NotContains(t, body, "<script>alert(1)")
		page("/ui/login", http.StatusOK, `data-page="login"`, `<label for="token">Token</label>`, `type="password"`)
		page("/ui/runs/7", http.StatusOK, `data-page="run"`, `data-run="7"`, `<dialog id="confirm"`)
		page("/ui/leases", http.StatusOK, `data-page="leases"`, "durable runway")
		page("/ui/worlds", http.StatusOK, `data-page="worlds"`)
		page("/ui/health", http.StatusOK, `data-page="health"`, `id="chart"`, "heartbeat mode")
		page("/ui/worlds/w1", http.StatusOK, `data-page="world"`, `data-world="w1"`, `id="audit-run"`)
		page("/ui/runs/abc", http.StatusNotFound, "positive whole number")
		page("/ui/runs/-3", http.StatusNotFound)
		page("/ui/worlds/a%20b", http.StatusNotFound)
		page("/ui/nope", http.StatusNotFound, "no such page")

		resp, err := noRedirect.Get(b.url + "/ui/runs?id=+12+")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		require.Equal(t, "/ui/runs/12", resp.Header.Get("Location"))

		for path, ctype := range map[string]string{"/ui/assets/app.js": "text/javascript; charset=utf-8", "/ui/assets/style.css": "text/css; charset=utf-8"} {
			r := anon.get(t, path)
			require.Equal(t, http.StatusOK, r.status, path)
			require.Equal(t, ctype, r.ctype, path)
			require.NotContains(t, string(r.body), "http://", "no CDN: %s loads nothing from elsewhere", path)
			require.NotContains(t, string(r.body), "https://", path)
		}
		// An asset unchanged since the last load is not sent again.
		req, err := http.NewRequest(http.MethodGet, b.url+"/ui/assets/app.js", nil)
		require.NoError(t, err)
		resp, err = noRedirect.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		tag := resp.Header.Get("ETag")
		require.NotEmpty(t, tag)
		req.Header.Set("If-None-Match", tag)
		resp, err = noRedirect.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNotModified, resp.StatusCode)

		// Everything else still needs a token, and the API's answers are
		// not the dashboard's.
		anon.get(t, "/v1/runs").problem(t, "unauthorized")
		anon.get(t, "/v1/stats/runs").problem(t, "unauthorized")
		anon.get(t, "/nope").problem(t, "unauthorized")
		b.do(t, http.MethodPost, "/", nil).problem(t, "method-not-allowed")
	})
}
