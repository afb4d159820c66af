package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/journal"
)

// The heartbeat mode of remote runners (SPEC §2; docs/operations/rollout.md).
// The mode of the remote holders' keeper is the server-wide mode of every
// remote runner — Config.RemoteMode at start, switched at runtime through
// /v1/admin/mode as the worker "remote-holders" (or with all: true) — and
// one remote runner, named by its owner as the worker "remote:<owner>",
// may be given its own. What each mode does to POST /v1/runs/{id}/renew:
//
//   - writebehind: the lease is marked for the next drain and the answer
//     makes no store call; the drain's confirmations are the runway.
//   - sync: the fenced renewal is written before the answer, and its send
//     time is the runway; nothing is marked, so the drain issues nothing.
//   - dark: as sync — the synchronous write is authoritative — and the
//     lease is marked for the drain too. A drain that finds a dark lease
//     lost changes nothing the runner sees: it is counted
//     (leasehold_keeper_dark_diffs_total{decision="lost",
//     worker="remote-holders"}) and the next synchronous renewal meets the
//     refusal.
//
// A runner whose own mode differs from the keeper's keeps these rules;
// only the dark difference count needs the keeper itself in dark (the
// keeper decides what a lost drain row means from its own mode). A runner
// in writebehind under a keeper in sync or dark has its drained renewals
// confirmed on the keeper's path by the flush (leaseBook.flush), and a
// lease the drain finds lost is forgotten, so its next renewal is written
// synchronously and the store decides.

// remoteOwnerPrefix names one remote runner in the admin mode API.
const remoteOwnerPrefix = "remote:"

// maxOwnerModes bounds the per-runner overrides a server keeps.
const maxOwnerModes = 10000

// modeOf is the mode owner's renewals are made in.
func (b *leaseBook) modeOf(owner string) keeper.Mode {
	b.mu.Lock()
	m, ok := b.ownerModes[owner]
	b.mu.Unlock()
	if ok {
		return m
	}
	return b.k.Mode()
}

// setMode switches every remote runner's mode: the keeper's, and any
// runner's own is dropped (all remote runners are now in m).
func (b *leaseBook) setMode(m keeper.Mode) (keeper.Mode, error) {
	prev := b.k.Mode()
	if err := b.k.SetMode(m); err != nil {
		return prev, err
	}
	b.mu.Lock()
	clear(b.ownerModes)
	b.mu.Unlock()
	return prev, nil
}

// setOwnerMode gives one remote runner its own mode; the keeper's mode
// clears it (the runner follows the server's again).
func (b *leaseBook) setOwnerMode(owner string, m keeper.Mode) (prev keeper.Mode, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	prev, ok := b.ownerModes[owner]
	if !ok {
		prev = b.k.Mode()
	}
	if m == b.k.Mode() {
		delete(b.ownerModes, owner)
		return prev, nil
	}
	if _, ok := b.ownerModes[owner]; !ok && len(b.ownerModes) >= maxOwnerModes {
		return prev, fmt.Errorf("%d remote runners have their own mode already: %w", maxOwnerModes, leasehold.ErrConflict)
	}
	if b.ownerModes == nil {
		b.ownerModes = map[string]keeper.Mode{}
	}
	b.ownerModes[owner] = m
	return prev, nil
}

// ownerModeList lists the runners with their own mode, by owner.
func (b *leaseBook) ownerModeList() []WorkerMode {
	b.mu.Lock()
	out := make([]WorkerMode, 0, len(b.ownerModes))
	for o, m := range b.ownerModes {
		out = append(out, WorkerMode{Worker: remoteOwnerPrefix + o, Mode: m.String()})
	}
	b.mu.Unlock()
	slices.SortFunc(out, func(a, c WorkerMode) int { return strings.Compare(a.Worker, c.Worker) })
	return out
}

// remoteOwner reads "remote:<owner>", validating the owner as a claim's.
func remoteOwner(name string) (owner string, ok bool, err error) {
	owner, ok = strings.CutPrefix(name, remoteOwnerPrefix)
	if !ok {
		return "", false, nil
	}
	if err := journal.ValidateID("owner", owner); err != nil {
		return "", true, err
	}
	return owner, true, nil
}

// shadow marks a lease renewed synchronously in dark mode for the drain
// too: the drain's evidence runs beside the authoritative write.
func (b *leaseBook) shadow(ref driver.RunLeaseRef, owner string) {
	b.mu.Lock()
	h, ok := b.m[ref]
	b.mu.Unlock()
	if ok && h.owner == owner && h.e.Live() {
		h.e.Renew()
	}
}
