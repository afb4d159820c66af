// Package dashboard is the web dashboard `leasehold serve` serves at "/":
// queues and runs (filtered by queue, state or owner, searched by id or
// unique key), a run's attempts, effects and events (live, over the
// run's SSE stream), the live leases with their durable runway, a
// durable-lag histogram and a lease's runway over time, worlds with their
// holder, band, journal tail (live, over the journal's SSE stream) and
// audit strip, and a health page (throughput chart, alerts, store-clock
// alarms, the clock doctor's figures, the store's pools and their
// saturation, heartbeat modes and their dark-mode differences, the
// host's world load).
//
// Every stream is read with fetch() and a stream reader rather than
// EventSource, which cannot send the Authorization header (followSSE in
// app.js); each resumes after the last id it saw.
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
