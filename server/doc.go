// Package server is `leasehold serve`: an HTTP/JSON API over a
// leasehold.Client, so a runner in any language, on any machine, can
// enqueue runs, claim them under fenced leases, renew them, record
// idempotent effects, emit events and finish them — with the same fencing
// as the in-process worker, because every mutating call carries the fence
// and the store checks it in the SQL WHERE (docs/design/fencing.md).
//
// # Runway over the wire
//
// A lease's runway is measured from the send time of the write that set
// its expiry (SPEC §1). Over HTTP the server is the sender: it notes its
// own monotonic send time of each claim and renewal, and every answer that
// touches a lease carries runway_ms — what is left of that lease, on the
// server's clock, less S, at the moment the answer is written. A client
// sets its deadline to its own send time of the request plus runway_ms. It
// sent before the server did and reads the answer after the server wrote
// it, so the deadline is earlier than the server's, whatever the two
// clocks' offset: conservative by construction.
//
// The effect gate runs on the server (effects/begin carries the effect's
// declared maximum duration): the runway it vouches for must cover the
// effect plus the margin, or one synchronous renewal is tried and, still
// short, the call is refused with the runway problem and nothing is
// written.
//
// Remote renewals are write-behind (leases.go): one internal/keeper for
// every lease held through this server marks a renewal in memory, and one
// drain per T_drain renews every remote runner's dirty leases in one
// RunRenewMany (an owner per run), so heartbeat statements do not grow with
// the number of remote runners. A renewal's answer carries the runway of
// the last confirmed write; a lease the server does not keep live for that
// owner is renewed synchronously, fenced by the store. Close (or Serve's
// shutdown) drains once more and stops the keeper.
//
// # Streams
//
// GET /v1/runs/{id}/events/stream and GET /v1/worlds/{id}/journal/stream
// are server-sent events, read from the tables after the last event sent,
// each event with an id; a client resumes with Last-Event-ID with no gap
// and no duplicate. Writes of other processes on Postgres wake a stream at
// once (LISTEN/NOTIFY: the run events' notification, the journal table's
// trigger); otherwise a stream reads again every Config.StreamPoll.
//
// # Errors
//
// Every error is an RFC 9457 problem document (application/problem+json)
// whose type is one stable URI per sentinel (Problem, problem.go). Bodies
// are decoded strictly: unknown fields, trailing data, invalid UTF-8 in a
// string and bodies over Config.MaxBodyBytes are refused with a typed
// problem before anything is written.
//
// # Auth
//
// Every route but /healthz needs a bearer token (package auth): the
// store keeps its SHA-256 (driver.TokenStore) and the server caches what
// it read for Config.TokenCacheTTL. Who may call what is one table,
// authz.go: a rule per route — the action (read, work, admin) and where
// the queue or world it is checked against comes from (the run in {id},
// the world in {world}, or the body, checked by the handler). A route
// without a rule is open to a bare admin token only, so a new route is
// closed until it is given one. Config.RateLimit bounds each token's rate.
//
// The routes are in routes.go; openapi.json (served at /openapi.json)
// documents them, and a test fails when the two differ.
package server
