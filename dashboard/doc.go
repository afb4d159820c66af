// Package dashboard is the web dashboard `leasehold serve` serves at "/":
// queues and runs, a run's attempts, effects and events (live, over the
// run's SSE stream), the live leases with their durable runway, worlds
// with their holder, band, journal tail and audit strip, and a health
// page (throughput chart, store-clock alarms, heartbeat modes and their
// dark-mode differences, the host's world load).
//
// The runs page renders with its one page of runs (by primary key, flat
// however large the table) and draws the counts by state when they come:
// they are a grouped scan of the whole table, which the server caches
// briefly (server.Config.StatsCacheTTL), never something the first render
// waits for. Charts are inline SVG drawn by the script from the server's
// own figures: no chart library, no CDN.
//
// It is server-rendered HTML (html/template) plus one small vanilla
// script, every byte embedded with embed: no build step, no CDN, no
// network but the server it came from. The pages carry no data of their
// own — the page shells are public, like a login form — and the script
// reads the same JSON API any client reads, with the bearer token the
// login page keeps in sessionStorage. So the dashboard can show exactly
// what the token may read and nothing else, offers an action only when
// GET /v1/whoami says the API would accept it, and has no second way in:
// no cookie, so no cross-site request can act with a user's rights.
package dashboard
