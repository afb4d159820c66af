package host

import "encoding/json"

// Program is what a world runs. A host runs one program for every world it
// holds; each world's journal records the program's name with every turn,
// so a host never folds a world written by another program.
//
// The program follows the decide/evolve split of event sourcing: a command
// is decided against the state into events and a reply, and the state is
// changed only by applying events. The journal holds the events, never a
// re-run of Decide, so a mirror replaying the journal on another node
// reaches the same state whatever Decide would answer there today.
type Program interface {
	// Name identifies the program: an identifier (journal.ValidateID).
	Name() string
	// New returns the state of a world whose journal holds no turn yet.
	New() State
}

// State is one world's state, folded from its journal. The host calls it
// from one goroutine at a time.
type State interface {
	// Decide decides one command against the state, without changing it:
	// the events to journal and the reply. An error refuses the command:
	// nothing is journaled and the submitter gets a *CommandError wrapping
	// it; a retry is decided again. A business "no" that must answer every
	// retry alike (insufficient funds, say) is a reply, not an error.
	Decide(cmd Command) (Decision, error)
	// Apply folds one journaled event into the state. It must be
	// deterministic and accept every event Decide returned: the host
	// applies a turn's events right after deciding it (the next command of
	// a batch sees them) and again on every node that replays the journal.
	// An error is a journal the program cannot fold; the host stops
	// holding the world.
	Apply(ev Event) error
}

// Command is one submitted command.
type Command struct {
	// Key is the idempotency key: a command submitted again with the same
	// key is applied once and every submission gets the first reply.
	// Required; journal.ValidateKey's rule (≤ 256 bytes, no controls).
	Key string
	// Payload is the command, JSON (compact form ≤ journal.MaxPayloadBytes).
	Payload json.RawMessage
}

// Event is one fact a turn journals.
type Event struct {
	// Kind names the event for the program (an identifier).
	Kind string `json:"k"`
	// Data is the event's JSON.
	Data json.RawMessage `json:"d,omitempty"`
}

// Decision is what Decide made of a command.
type Decision struct {
	// Events are journaled in order, in one entry with the command's key;
	// none is allowed (a read, or a refusal that must answer retries alike).
	Events []Event
	// Reply is answered to the submitter and to every retry, JSON; empty is
	// null.
	Reply json.RawMessage
	// Effects are the side effects the command causes, run once each by
	// the host's Effector through the world's effect ledger (effects.go)
	// before the turn is journaled; their outcomes are journaled with the
	// turn and reported in the Reply.
	Effects []EffectRequest
}
