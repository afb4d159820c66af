package difftest

// op encodes one op of a seed: its kind, then its choices, padded to
// opBytes with zeros (each pool's first, valid value).
func op(kind int, choices ...byte) []byte {
	b := make([]byte, opBytes)
	b[0] = byte(kind)
	copy(b[1:], choices)
	return b
}

// slot is the choice byte of run slot k (the k-th run enqueued); a zero
// byte is the run the latest claim returned.
func slot(k int) byte { return byte(2*k + 1) }

func sequence(ops ...[]byte) []byte {
	var out []byte
	for _, o := range ops {
		out = append(out, o...)
	}
	return out
}

// seeds cover every op kind, on the happy path and off it; go test runs
// them as a regular test on every CI run. The choice bytes follow each
// decoder's reads in order (ops_*_test.go); index pools in input_test.go.
var seeds = [][]byte{
	// A run's life: enqueue two, claim one, renew, emit, an effect begun
	// and committed, a transactional effect, complete; read the other.
	sequence(
		op(opEnqueue),
		op(opEnqueue, 0, 0, 2, 1),
		op(opClaim),
		op(opRenew, 0, 0, 0, 0),
		op(opEmit, 0, 0, 0, 0, 0, 0, 0),
		op(opEffectBegin, 0, 0, 0),
		op(opEffectCommit, 0, 0, 0, 2),
		op(opRunTx, 0, 0, 1, 3, 0),
		op(opRunTx, 0, 0, 1, 3, 0),
		op(opEffectBegin, 0, 0, 2),
		op(opEffectResolve, 0, 0, 2, 0, 0),
		op(opComplete, 0, 0, 2),
		op(opRead, slot(1), 0, 0, 0, 0, 0),
		op(opRead, 0, 0, 0, 0, 0, 2),
	),
	// Expiry, reclaim, retries and the operator's actions.
	sequence(
		op(opEnqueue, 2, 0, 0, 0, 0, 2, 2, 1, 0, 0, 0, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0),
		op(opClaim, 0, 0, 2, 1),
		op(opAdvance, 0),
		op(opRenewMany, 1, slot(0), 0, slot(1), 0, 0, 0),
		op(opAdvance, 3),
		op(opRenew, slot(0), 0, 0, 0),
		op(opReclaim),
		op(opClaim, 0, 1, 2),
		op(opFail, slot(0), 0, 1, 2),
		op(opFail, slot(1), 0, 1, 2),
		op(opClaim, 0, 1, 2),
		op(opBlock, slot(0), 0, 1),
		op(opUnblock, slot(0)),
		op(opUnblock, slot(0)),
		op(opCancel, slot(1), 1),
		op(opCancel, slot(1), 1),
		op(opCompleteMany, 2, slot(0), 0, slot(1), 0, slot(0), 0, 2),
		op(opRead, slot(1), 0, 0, 0, 0, 1),
		op(opRead, slot(1), 0, 0, 0, 0, 2),
	),
	// A world's life: create, append, a refused grant, renew, handoff,
	// the old holder's append refused, revoke, expiry and the sweep, an
	// import under a new name and one that conflicts.
	sequence(
		op(opWorldCreate),
		op(opAppend, 0, 0, 1, 0, 0, 0, 0, 0, 0),
		op(opGrant, 0, 1, 0, 0),
		op(opLeaseRenew, 0, 1, 0, 0),
		op(opHandoff, 0, 1, 0, 0, 1),
		op(opAppend, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
		op(opAdvance, 3),
		op(opSweep, 0, 0),
		op(opRevoke, 0, 1, 0, 0, 1),
		op(opGrant, 0, 0, 1, 1, 0),
		op(opImport, 0, 1, 0, 1),
		op(opImport, 0, 0, 1, 1),
		op(opImport, 0, 2, 2, 1),
		op(opImport, 0, 2, 4, 1),
		op(opRead, 0, 0, 0, 1, 0, 3),
		op(opRead, 0, 0, 0, 0, 0, 4),
	),
	// Hostile input: bad payloads, queues and keys, unknown runs, stale
	// fences, bad limits, a RunTx whose function releases its own run.
	sequence(
		op(opEnqueue, 0, 4, 12),
		op(opEnqueue, 0, 0, 13, 0, 0, 0, 4),
		op(opEnqueue, 0, 0, 18, 0, 0, 0, 0),
		op(opEnqueue, 0, 0, 20),
		op(opClaim, 0, 0, 4),
		op(opComplete, 0, 0, 0),
		op(opEnqueue),
		op(opClaim),
		op(opComplete, 3, 0, 0),
		op(opComplete, 0, 3, 0),
		op(opComplete, 0, 0, 12),
		op(opEmit, 0, 0, 3, 0, 0, 0, 0),
		op(opEffectBegin, 0, 0, 5),
		op(opRunTx, 0, 0, 0, 0, 2),
		op(opRunTx, 0, 0, 0, 0, 3),
		op(opRunTx, 0, 0, 1, 0, 4),
		op(opRunTx, 0, 0, 2, 0, 5),
		op(opWorldCreate, 7),
		op(opAppend, 0, 0, 1, 0, 0, 0, 0, 12),
		op(opAdvance, 12),
		op(opRead, 0, 0, 5, 5, 5, 2),
	),
	// Time at the stores' edges: sub-microsecond delays, leases and clock
	// moves (stores keep microseconds), an expiry reached exactly, the
	// largest and most negative retry delays, a world's lease expiring.
	sequence(
		op(opEnqueue, 0, 0, 0, 0, 0, 1, 0),
		op(opEnqueue, 0, 0, 0, 0, 4, 0, 0),
		op(opAdvance, 7),
		op(opClaim, 0, 0, 2, 6),
		op(opClaim, 0, 0, 2, 1),
		op(opAdvance, 6),
		op(opRenew, slot(0), 0, 0, 6),
		op(opRenew, slot(1), 0, 0, 1),
		op(opFail, slot(0), 0, 1, 11),
		op(opFail, slot(1), 0, 1, 12),
		op(opAdvance, 0),
		op(opRenew, slot(1), 0, 0, 1),
		op(opReclaim),
		op(opWorldCreate, 0, 0, 6),
		op(opWorldCreate, 0, 0, 1),
		op(opAdvance, 0),
		op(opAppend, 0, 0, 1, 0, 0, 0, 0, 0, 0),
		op(opLeaseRenew, 0, 1, 0, 1),
		op(opSweep, 0, 0),
		op(opAdvance, 12),
		op(opAppend, 0, 0, 1, 0, 0, 0, 0, 0, 0),
	),
}
