// Package rt is the runtime seam of every component that runs a loop: how
// it starts a goroutine, waits (for an event, its context or a timeout),
// bounds a call in time and yields. The worker, the completer, the event
// committer, the batcher, the keeper and the lifecycle under them start
// and wait only through a Runtime.
//
// Real (the default everywhere) is goroutines, channels and the injected
// clock's timers: exactly what the components did before the seam. The
// simulator (internal/sim) implements Runtime on its cooperative event
// loop — a goroutine is one of its threads, a wait parks the thread until
// the loop resumes it at a virtual instant — so the shipped worker runs
// there unchanged, one thread at a time, and a seed replays exactly.
//
// The rule a component keeps so that both runtimes can run it: it never
// blocks except in Wait (a mutex held for a moment is fine; a mutex held
// across a store call or a Wait is not), and it measures time only with
// its clock and the runtime (WithTimeout, Wait's timer), never with
// context.WithTimeout or time.After, which would fire on the machine's
// clock inside a simulation.
package rt
