package host

import (
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// NotHolderError: this host does not hold the world's write lease (any
// more). Holder names the holder the host last saw in the store ("" when
// nobody holds it, or it could not tell); submit there, or retry. Nothing
// was applied by this host for the command that got it. Matches
// lease.ErrNotHolder.
type NotHolderError struct {
	World  string
	Holder string
	Epoch  int64
}

func (e *NotHolderError) Error() string {
	if e.Holder == "" {
		return fmt.Sprintf("world %s: not held here (no current holder known)", e.World)
	}
	return fmt.Sprintf("world %s: not held here; holder is %s under epoch %d", e.World, e.Holder, e.Epoch)
}

// Unwrap returns lease.ErrNotHolder.
func (e *NotHolderError) Unwrap() error { return lease.ErrNotHolder }

// OverloadedError: the world's inbox holds Limit commands already; the
// command was not queued. Matches lease.ErrOverloaded.
type OverloadedError struct {
	World      string
	Limit      int
	RetryAfter time.Duration
}

func (e *OverloadedError) Error() string {
	return fmt.Sprintf("world %s: inbox full (%d commands); retry after %s", e.World, e.Limit, e.RetryAfter)
}

// Unwrap returns lease.ErrOverloaded.
func (e *OverloadedError) Unwrap() error { return lease.ErrOverloaded }

// KeyReusedError: the key was applied at Position with a different
// payload. Nothing was applied. Matches lease.ErrKeyReused.
type KeyReusedError struct {
	World    string
	Key      string
	Position int64
}

func (e *KeyReusedError) Error() string {
	return fmt.Sprintf("world %s: key %q was applied at position %d with a different payload", e.World, e.Key, e.Position)
}

// Unwrap returns lease.ErrKeyReused.
func (e *KeyReusedError) Unwrap() error { return lease.ErrKeyReused }

// CommandError: the program refused the command (Decide returned Err), or
// its turn could not be journaled (too large, an event the program cannot
// apply). Nothing was journaled. It matches Err and lease.ErrInvalid (a
// refused command is bad input, whatever error the program chose), alike
// in process and through a Remote.
type CommandError struct {
	World string
	Key   string
	Err   error
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("world %s: command %q refused: %v", e.World, e.Key, e.Err)
}

// Unwrap returns the program's error and lease.ErrInvalid.
func (e *CommandError) Unwrap() []error { return []error{e.Err, lease.ErrInvalid} }

// UnknownOutcomeError: the append carrying the command failed in a way
// that leaves its outcome unknown (a store error, a timeout). It may have
// been applied; retry with the same key, which answers the first reply if
// it was. Matches lease.ErrUnavailable and the cause.
type UnknownOutcomeError struct {
	World string
	Key   string
	Err   error
}

func (e *UnknownOutcomeError) Error() string {
	return fmt.Sprintf("world %s: command %q outcome unknown (retry with the same key): %v", e.World, e.Key, e.Err)
}

// Unwrap returns lease.ErrUnavailable and the cause.
func (e *UnknownOutcomeError) Unwrap() []error { return []error{lease.ErrUnavailable, e.Err} }

// ProgramError: the world's journal holds turns of another program, or
// the program could not fold them. Matches lease.ErrInvalid (an unknown
// program) or lease.ErrCorrupt (a journal the program cannot fold).
type ProgramError struct {
	World    string
	Program  string // this host's program
	Position int64
	Err      error
}

func (e *ProgramError) Error() string {
	return fmt.Sprintf("world %s: program %s at position %d: %v", e.World, e.Program, e.Position, e.Err)
}

// Unwrap returns the cause.
func (e *ProgramError) Unwrap() error { return e.Err }

var errProgramMismatch = fmt.Errorf("the journal was written by another program: %w", lease.ErrInvalid)

// retryable reports whether a submission that failed with err may be sent
// again with the same key (to the holder err names, or after a while).
func retryable(err error) bool {
	return errors.Is(err, lease.ErrNotHolder) || errors.Is(err, lease.ErrOverloaded) ||
		errors.Is(err, lease.ErrUnavailable) || errors.Is(err, lease.ErrClosed)
}
