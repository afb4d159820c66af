//go:build simbugs

package bugs

// The planted bugs, settable in a -tags simbugs build; see off.go. Set at
// most one, before a simulation starts, and reset it after.
var (
	SkipCompleteFence bool
	SkipGate          bool
	DrainRevives      bool
	RunwayFromAnswer  bool
)

// Enabled reports whether bug switches can be set (a -tags simbugs build).
const Enabled = true
