// Package startstop is the one lifecycle every long-running leasehold
// service embeds: the keeper's drain and watch loops, the worker, the
// reclaimer, the world sweeper and appender, and the batchers.
//
// A service embeds a [Lifecycle] and implements Start and Stop by calling
// [Lifecycle.Start] and [Lifecycle.Stop] with its own start-up and
// shutdown steps. The lifecycle gives every service the same contract
// (River's internal/startstop is the model):
//
//   - Start(ctx) is idempotent: a second Start of a running service returns
//     nil; Start after Stop returns [ErrStopped] (a stopped service is done,
//     never restarted); a start-up step that fails leaves the service
//     unstarted and returns its error.
//   - Stop(ctx) is idempotent and bounded by ctx: it cancels the service's
//     run context, waits for its goroutines until ctx ends and then returns
//     ctx's error; the goroutines still finish on their own afterwards.
//   - Started() and Stopped() are channels closed at those moments, so a
//     test waits on a signal instead of sleeping.
//
// # States
//
//	idle ──Start──▶ starting ──ok──▶ running ──Stop──▶ stopping ──goroutines done──▶ stopped
//	  │                 │ error                                                        ▲
//	  │                 ▼                                                              │
//	  │               idle                                                             │
//	  └──────────────────────────────────Stop──────────────────────────────────────────┘
//
// No mutex is held while a start-up or shutdown step runs, so a step may
// make a store round trip (the worker's clock check does).
//
// Goroutines are started with [Lifecycle.Go] and carry a name (a pprof
// label), so a reader of a goroutine dump, and later the simulator's spawn
// seam, sees which loop is which.
package startstop
