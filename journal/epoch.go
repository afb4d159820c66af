package journal

// Epochs after a store's lossy failover.
//
// A grant or handoff starts epoch+1. A store that can lose its last
// commits in a failover (a Postgres standby promoted before it received
// them) could then start an epoch a lost grant had already given another
// holder: two holders under one epoch, which a downstream system that
// fences world effects by epoch alone cannot tell apart. Such a store
// names an epoch floor when it plans (State.EpochFloor: for Postgres
// (WAL timeline − 1) · EpochBand, driver/postgres/fencefloor.go), and the
// next epoch is then floor+1 if that is higher: past every epoch the lost
// timeline can have started. The fold accepts exactly these two steps —
// epoch+1, or a jump to the first epoch of a band, k·EpochBand + 1 — so an
// audit still refuses any other gap (docs/design/fencing.md §9).

// EpochBand is the width of one failover band of epochs (and of run
// fences, on Postgres): 2^40.
const EpochBand int64 = 1 << 40

// nextEpoch is the epoch a grant or handoff from s starts: s.Epoch+1, or
// s.EpochFloor+1 when the store named a higher floor. A floor that is not
// a positive multiple of EpochBand is not one a store issues, and is
// ignored (the fold would refuse the jump).
func nextEpoch(s State) int64 {
	if f := s.EpochFloor; f > s.Epoch && f%EpochBand == 0 {
		return f + 1
	}
	return s.Epoch + 1
}

// validNextEpoch reports whether a grant or handoff may start next after
// cur: cur+1, or a jump to the first epoch of a later band.
func validNextEpoch(cur, next int64) bool {
	return next == cur+1 || (next > cur+1 && (next-1)%EpochBand == 0)
}
