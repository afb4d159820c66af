// Package remote is the Go client of `leasehold serve`: the HTTP API's
// calls (Client) and a remote worker (Worker) that runs the same handlers
// as the in-process leasehold.Worker — leasehold.Handler, the same
// *leasehold.RunHandle with Effect, Emit, SetResult and ResolveEffect — so
// moving a worker out of the database's process is one line:
//
//	w, err := c.NewWorker(leasehold.WorkerConfig{Queues: qs})                 // in process
//	w, err := remote.NewWorker(remote.WorkerConfig{Client: rc, Queues: qs})   // through the API
//
// The remote worker keeps the in-process worker's guarantees through the
// server: every write carries the run's fence and is applied by the store
// only while it is current; the side-effect gate is the server's (POST
// …/effects/begin); renewals are write-behind on the server, coalesced by
// its keeper with every other remote runner's (docs/design/fencing.md,
// "Remote holders"). The worker's own deadline for a run is its send time
// of the last answered claim or renewal plus the runway the server
// vouched for: at it, the handler's context is cancelled (self-stop),
// whatever the offset between this machine's clock and the server's.
//
// RunHandle.Tx is not available remotely (it needs the store's own
// transaction); Snooze fails the attempt with the delay as its retry time
// (the API has no snooze call yet), so it consumes an attempt.
package remote
