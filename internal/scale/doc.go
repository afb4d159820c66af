// Package scale holds the many-processes tests of SPEC §6 (storage): N
// Leasehold processes over one Postgres, none special. Each process (this
// test binary re-executed) runs what every replica runs — a worker, the
// reclaimer, the world expiry sweeper — and a world holder appending to
// its own world's journal; they share the claims, the reclaims, the sweeps
// and the event fan-out through the store alone. The parent owns the store (a fresh schema on the shared
// test server), the witness outside the ledger (internal/witness over
// HTTP), and the record of every acknowledgement the processes report.
//
// TestProcessesComeAndGo is the correctness test: processes are added,
// stopped with SIGTERM (graceful) and killed with SIGKILL under load, and at
// the end every run is completed with its effects committed and accepted
// downstream, no effect ran twice without an uncertain report, and every
// acknowledged event and journal append is in the store once.
//
// TestScaleFigures is the measurement (skipped unless
// LEASEHOLD_SCALE_FIGURES=1): runs/s and world commands (journal
// appends)/s with 1, 2 and 4 processes:
//
//	LEASEHOLD_SCALE_FIGURES=1 go test -count=1 -run TestScaleFigures -v ./internal/scale
//
// The package has no code of its own; everything is in its tests.
package scale
