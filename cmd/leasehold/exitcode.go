package main

import (
	"errors"
	"fmt"

	"github.com/leasehold/leasehold"
)

// The exit codes, all of them: scripts branch on these, so they are
// defined here once and documented in the README's "Exit codes" table (a
// test compares the two).
const (
	exitOK       = 0 // the command did what was asked
	exitError    = 1 // it failed: the store, the network, a failed audit or doctor verdict, anything not below
	exitUsage    = 2 // the command line or its input is wrong (unknown command or flag, bad value, ErrInvalid): nothing was changed
	exitNotFound = 3 // the run, world, token or queue named does not exist (ErrNotFound, ErrUnknownQueue)
	exitConflict = 4 // the state does not allow it, or a stale fence/epoch was refused (ErrConflict, ErrFenced, …): nothing was changed
)

// exitCodes is the table the README documents, in order.
var exitCodes = []struct {
	Code    int
	Meaning string
}{
	{exitOK, "success"},
	{exitError, "error"},
	{exitUsage, "usage"},
	{exitNotFound, "not found"},
	{exitConflict, "conflict or fenced"},
}

// exitCode maps an error to its exit code by the sentinel it wraps. The
// order matters where one error matches two sentinels: ErrUnknownQueue
// also matches ErrInvalid, and a missing queue is "not found".
func exitCode(err error) int {
	var usage usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &usage):
		return exitUsage
	case errors.Is(err, leasehold.ErrNotFound), errors.Is(err, leasehold.ErrUnknownQueue):
		return exitNotFound
	case errors.Is(err, leasehold.ErrInvalid):
		return exitUsage
	case errors.Is(err, leasehold.ErrConflict), errors.Is(err, leasehold.ErrFenced),
		errors.Is(err, leasehold.ErrNotHolder), errors.Is(err, leasehold.ErrLeaseHeld),
		errors.Is(err, leasehold.ErrLeaseExpired), errors.Is(err, leasehold.ErrSeenBehind),
		errors.Is(err, leasehold.ErrKeyReused):
		return exitConflict
	}
	return exitError
}

// usageError is a command line the CLI refuses before doing anything: a
// wrong number of arguments, a flag value out of range, flags that do not
// go together. It exits 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef is a usageError with a message.
func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// reportedFailure exits 1 without an error line: the command has already
// printed why (a failed audit, a doctor's refusal, a failing seed).
type reportedFailure struct{}

func (reportedFailure) Error() string { return "failed (the report above says why)" }
