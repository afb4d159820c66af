//go:build simbugs

package bugs

import "fmt"

// The planted bugs, settable in a -tags simbugs build; see off.go. Set at
// most one, before a simulation starts, and reset it after.
var (
	SkipCompleteFence bool
	SkipGate          bool
	DrainRevives      bool
	RunwayFromAnswer  bool

	HolderRunwayFromAnswer bool

	HostSkipsReplay   bool
	MirrorForgetsKeys bool

	// NoFenceFloor is not one Set knows: the simulator has no Postgres
	// store. internal/failover's planted-bug test sets it directly.
	NoFenceFloor  bool
	BandSkipsNote bool
)

// Enabled reports whether bug switches can be set (a -tags simbugs build).
const Enabled = true

// Set turns on the bug named (complete-fence, gate, revive, runway-answer,
// holder-runway-answer) and returns the function that turns it off.
func Set(name string) (reset func(), err error) {
	sw, ok := map[string]*bool{"complete-fence": &SkipCompleteFence, "gate": &SkipGate,
		"revive": &DrainRevives, "runway-answer": &RunwayFromAnswer, "holder-runway-answer": &HolderRunwayFromAnswer,
		"host-skips-replay": &HostSkipsReplay, "mirror-forgets-keys": &MirrorForgetsKeys,
		"band-skips-note": &BandSkipsNote}[name]
	if !ok {
		return nil, fmt.Errorf("bugs: unknown bug %q (complete-fence, gate, revive, runway-answer, holder-runway-answer, host-skips-replay, mirror-forgets-keys, band-skips-note)", name)
	}
	*sw = true
	return func() { *sw = false }, nil
}
