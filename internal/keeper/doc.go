// Package keeper is the write-behind lease keeper, the side-effect gate and
// the self-stop of SPEC §2.
//
// A holder's renewal is an in-memory flag (Entry.Renew: non-blocking,
// allocation-free). One drain per keeper — one per resource kind per
// process — flushes every dirty entry every T_drain in one store call
// (Flusher), which writes only expiries and never revives an expired lease.
// An entry whose row the flush did not return has lost its lease: its
// holder's context is cancelled at once and it is never flushed again. A
// failed flush is retried with backoff; a single failed heartbeat never
// fails a run. The drain and the self-stop watchdog are the keeper's two
// loops, started and stopped through internal/startstop (Keeper.Start,
// Keeper.Stop); on stop the drain flushes once more within the stop's
// deadline. DrainOnce and WatchOnce are the loops' bodies, exported so the
// simulator drives them on its own schedule.
//
// The gate (Entry.Gate) and the self-stop watchdog decide from one pure
// function of the send time of the holder's last confirmed expiry-setting
// write, on the monotonic clock (decide.go): the holder's runway is
// (sent + T_lease) - now - S, and its durable lag is now - sent. The
// happy path of the gate makes no store call, so it holds during a
// partition; a process that pauses between the gate and the effect is
// stopped by the fence, not by the gate.
//
// Modes (sync, dark, writebehind) switch at runtime. In sync the holder's
// own synchronous renewals are the evidence (Entry.ConfirmSync) and the
// drain issues nothing; in dark both run, the sync path is enforced and
// every gate and self-stop decision that would have gone the other way
// under write-behind is counted; in writebehind the drain is the evidence.
//
// Time is injected (clock.Clock), so every rule is tested on a fake clock
// and the simulator drives the same code.
package keeper
