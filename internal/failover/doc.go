// Package failover holds the Postgres failover tests of SPEC §6 (storage):
// Leasehold on a primary with a streaming standby, reached through one
// pgx multi-host connection string with target_session_attrs=read-write,
// while the primary is killed with SIGKILL (every server process at once)
// under load and the standby is promoted.
//
// Each test builds its own pair of throwaway clusters (internal/pgcluster:
// initdb for the primary, pg_basebackup -R for the standby, own ports, as
// the postgres user when root) and runs, in the test process, two workers
// whose handlers call a witness outside the ledger (internal/witness) for
// every effect, emit an event after each and Step it, plus a world holder
// appending to a world's journal with an idempotency key per append. A
// ledger records every write the store acknowledged: completions answered
// by RunCompleteMany, effect commits, events acknowledged by Step, journal
// appends answered with their position.
//
// After the promotion, once every run is final, the checks read the new
// primary and the witness:
//
//   - synchronous standby (synchronous_commit=on, synchronous_standby_names
//     naming it): every acknowledged write is present — none lost;
//   - asynchronous standby, with the primary's walsender stopped (SIGSTOP)
//     for a window before the kill so the loss is certain rather than a
//     race: the writes acknowledged before the window are all present, the
//     ones acknowledged inside it are counted as lost;
//
// and in both: no fence handed out to two claims (the Postgres driver's
// timeline floor, driver/postgres/fencefloor.go; TestFencesAfterALossyPromotion
// checks each fence- and epoch-issuing statement by hand) and no effect
// applied twice downstream. The witness is an idempotent downstream: it
// refuses a lower fence than it accepted for a key and answers a key it
// already applied with the first result. On the synchronous standby no
// effect even reaches it twice but after an uncertain report; on the
// asynchronous one an effect whose intent was lost with the window is run
// again by the next holder (counted, deduplicated by its key, and each must
// have first run inside the window). Built with -tags simbugs, the
// WithoutFloor tests remove the floor and show the checks catch the
// reissued fences. Writes whose outcome was unknown at
// the kill (an append or a commit cut off mid-flight) are resolved as the
// protocol says — an append is retried with its key and journaled once, an
// effect intent without a commit is reported uncertain and reconciled with
// the witness — never assumed. The tests log the time from the kill to the
// first write that started after it and succeeded.
//
// The package has no code of its own; everything is in its tests.
package failover
