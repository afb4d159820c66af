package libsql_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain runs this package's tests with GODEBUG=invalidptr=0, re-running
// the test binary with it when it is not set. go-libsql (code we do not
// own) leaves a non-pointer value (0x1) in a pointer-typed slot of
// (*rows).Next's frame; when the garbage collector shrinks that
// goroutine's stack, the runtime's check throws "invalid pointer found on
// stack" and kills the binary (seen in CI, rarely, at random cases). The
// setting turns off only that check; the value is not a Go pointer and is
// never followed. It must be set before the runtime starts (a //go:debug
// directive cannot name it, and os.Setenv does not reach it), hence the
// re-run. doc.go tells users of the driver the same.
func TestMain(m *testing.M) {
	godebug := os.Getenv("GODEBUG")
	if strings.Contains(godebug, "invalidptr=0") {
		os.Exit(m.Run())
	}
	if godebug != "" {
		godebug += ","
	}
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(os.Environ(), "GODEBUG="+godebug+"invalidptr=0")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		os.Exit(exit.ExitCode())
	case err != nil:
		fmt.Fprintln(os.Stderr, "re-running the tests with GODEBUG=invalidptr=0:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
