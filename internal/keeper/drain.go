package keeper

import (
	"context"
	"time"

	"github.com/leasehold/leasehold/internal/bugs"
	"github.com/leasehold/leasehold/internal/rt"
)

// DrainOnce flushes every dirty live entry in one Flusher call, whatever
// the mode (the loop calls it only in dark and writebehind). The send time
// is read just before the call: runway counts from it.
//
// Entries the flush did not return are lost — given up and their holders
// cancelled at once (in dark mode only marked: the sync path decides) —
// and are never flushed again. On an error every entry of the batch is
// dirty again for the retry; nothing is decided, since a flush that failed
// on the wire may still have committed.
func (k *Keeper) DrainOnce(ctx context.Context) error {
	k.drainMu.Lock()
	defer k.drainMu.Unlock()
	batch := k.batch[:0]
	refs := k.refs[:0]
	k.mu.Lock()
	for _, e := range k.entries {
		if (e.state.Load() == live || bugs.DrainRevives) && !e.shadowLost.Load() && e.dirty.Swap(false) {
			batch = append(batch, e)
			refs = append(refs, e.ref)
		}
	}
	k.mu.Unlock()
	k.batch, k.refs = batch, refs
	if len(batch) == 0 {
		return nil
	}
	mode := k.Mode()
	sent := k.now()
	// A confirmation that arrives D_stop after its send is worthless (the
	// holder has stopped itself by then), so no flush waits longer.
	fctx, cancel := k.withFlushTimeout(ctx, k.t.Stop)
	lost, err := k.cfg.Flusher.Flush(fctx, refs)
	cancel()
	if err != nil {
		for _, e := range batch {
			e.dirty.Store(true)
		}
		k.stats.flushErrors.Add(1)
		return err
	}
	k.stats.flushes.Add(1)
	k.stats.flushedRows.Add(uint64(len(refs) - len(lost)))
	k.metrics.rowsPerFlush.Observe(float64(len(refs)))
	now := k.now()
	li := 0
	for i, e := range batch {
		if li < len(lost) && lost[li] == i {
			li++
			k.drainLost(e, mode, now)
			continue
		}
		k.observeLag(Lag(time.Duration(e.drainSent.Load()), now))
		if bugs.RunwayFromAnswer {
			advance(&e.drainSent, now)
			continue
		}
		advance(&e.drainSent, sent)
	}
	for i := range batch {
		batch[i] = nil // do not keep released entries alive
	}
	return nil
}

// drainLost handles a lease the drain's flush did not return.
func (k *Keeper) drainLost(e *Entry, mode Mode, now time.Duration) {
	if e.finishing.Load() {
		e.missing.Store(true) // most likely its own final write; that write's answer decides (Entry.Finishing)
		return
	}
	if mode == ModeDark {
		// The sync path is authoritative: it will meet the refusal on its
		// next renewal. Write-behind would have stopped the holder now.
		e.shadowLost.Store(true)
		k.stats.darkLostDiffs.Add(1)
		return
	}
	if e.giveUp(&LostError{Ref: e.ref, Lag: Lag(e.sent(mode), now)}, &k.stats.lost) {
		k.cfg.Logger.Warn("lease lost: the drain's flush did not return it", "kind", k.cfg.Kind, "id", e.ref.ID, "fence", e.ref.Fence)
	}
}

// drainLoop drains every T_drain while the mode drains. A failed drain is
// retried with backoff from T_drain/8, doubling up to T_drain. On stop it
// drains once more, bounded by the Stop call's context (and, as every
// drain, by D_stop); that last drain is not retried.
func (k *Keeper) drainLoop(ctx context.Context) {
	next := k.t.Drain
	var backoff time.Duration
	for {
		if k.rt.Wait(ctx, nil, next) == rt.Done {
			k.drainOnStop()
			return
		}
		next = k.t.Drain
		if k.Mode().Drains() {
			if err := k.DrainOnce(ctx); err != nil && ctx.Err() == nil {
				backoff = min(max(backoff*2, k.t.Drain/8), k.t.Drain)
				next = backoff
				k.cfg.Logger.Warn("drain failed; retrying", "kind", k.cfg.Kind, "in", backoff, "err", err)
			} else {
				backoff = 0
			}
		}
	}
}

// drainOnStop is the drain's last flush, made after its run context ended.
func (k *Keeper) drainOnStop() {
	if !k.Mode().Drains() {
		return
	}
	if err := k.DrainOnce(k.life.StopContext()); err != nil {
		k.cfg.Logger.Warn("last drain on stop failed", "kind", k.cfg.Kind, "err", err)
	}
}
