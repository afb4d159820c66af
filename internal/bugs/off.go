//go:build !simbugs

package bugs

import "fmt"

// The planted bugs, all off and constant in a normal build.
const (
	// SkipCompleteFence: RunComplete drops `AND fence = $f` (SQLite driver).
	SkipCompleteFence = false
	// SkipGate: the side-effect gate always passes (keeper.Entry.Gate).
	SkipGate = false
	// DrainRevives: the drain keeps flushing entries it gave up and the
	// store's renewal drops `expires_at > now` (keeper.DrainOnce, SQLite
	// RunRenewMany), so an expired or lost lease can be renewed again.
	DrainRevives = false
	// RunwayFromAnswer: a confirmed renewal counts runway from the
	// answer's arrival instead of the send (keeper).
	RunwayFromAnswer = false
	// HolderRunwayFromAnswer: world.Holder counts a confirmed renewal's
	// runway from the answer's arrival instead of the send.
	HolderRunwayFromAnswer = false
	// HostSkipsReplay: host.Host acquires a world without replaying the
	// journal into its mirror, and appends claiming its grant as the
	// position it has seen.
	HostSkipsReplay = false
	// MirrorForgetsKeys: host.Host's mirror forgets the command keys it
	// replayed when it acquires a world, so a retry is decided again.
	MirrorForgetsKeys = false
	// NoFenceFloor: the Postgres driver issues fences as fence+1 without
	// the WAL timeline's floor (driver/postgres/fencefloor.go), so a
	// standby promoted after losing a claim hands its fence out again.
	NoFenceFloor = false
	// BandSkipsNote: host.Host's hot-world band hands a world off without
	// journaling the transition (its host.band entry) first.
	BandSkipsNote = false
)

// Enabled reports whether bug switches can be set (a -tags simbugs build).
const Enabled = false

// Set refuses: only a -tags simbugs build can plant a bug.
func Set(name string) (reset func(), err error) {
	return nil, fmt.Errorf("bugs: cannot plant %q: build with -tags simbugs", name)
}
