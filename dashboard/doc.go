// Package dashboard is the web dashboard `leasehold serve` serves at "/":
// queues and runs, a run's attempts, effects and events, the live leases
// with their durable runway, and worlds with their holder, journal tail
// and audit strip.
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
