// Package model holds a Promela model of Leasehold's run lease protocol
// (lease.pml) and the script that checks it exhaustively with spin
// (check.sh). It has no Go API: the package exists so that `go test
// ./model` runs the check — the correct model must report zero errors, and
// each planted bug (complete without the fence, a drain that revives an
// expired lease, runway counted from the answer instead of the send, no
// gate, a silently re-run effect) must produce a counterexample naming the
// property it violates.
//
// The model covers the store's conditional writes (claim, the keeper's
// drain, complete, fail, reclaim, the effect ledger's intent, commit and
// resolve), a bounded-error store clock against the holders' clocks, two
// holders with crashes, pauses between gate and call, lost and delayed
// answers, the keeper's gate and self-stop, and a downstream witness that
// refuses lower fence tokens. README.md lists the bounds, each property,
// the transition-to-code table and the measured figures.
//
// The test needs spin (Debian: apt-get install -y spin) and gcc on PATH.
// Without them it is skipped, loudly — unless CI=true, where it fails.
package model
