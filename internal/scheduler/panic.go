package scheduler

import (
	"bytes"
	"fmt"
	"runtime/debug"
)

// panicError is a handler's recovered panic: its value and the stack of
// the goroutine where it happened. It fails the attempt like any error;
// its text — the reason the store keeps — is the value, a newline, and
// the stack from the panicking frame on, so the first frames a reader sees
// are the handler's own (journal.SafeReason cuts what exceeds the reason
// limit and says so).
type panicError struct {
	value any
	stack []byte // from the frame that panicked, runtime frames dropped
}

func newPanicError(v any) *panicError { return &panicError{value: v, stack: panicStack(debug.Stack())} }

func (e *panicError) Error() string {
	return fmt.Sprintf("handler panicked: %v\n%s", e.value, e.stack)
}

// panicStack trims debug.Stack taken in a deferred recover: the goroutine
// header, debug.Stack itself, the deferred function and the runtime's
// panic frames all come before the frame that panicked. Each frame is two
// lines (function, then "\tfile:line"); everything through the last
// "panic(" frame is dropped. A stack without one is kept whole.
func panicStack(s []byte) []byte {
	lines := bytes.Split(bytes.TrimRight(s, "\n"), []byte("\n"))
	cut := -1
	for i, l := range lines {
		if bytes.HasPrefix(l, []byte("panic(")) {
			cut = i + 2 // the frame's function line and its file line
		}
	}
	if cut < 0 || cut >= len(lines) {
		return s
	}
	return bytes.Join(lines[cut:], []byte("\n"))
}
