package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProgressOnlyOnATerminal: a buffer, a pipe and a regular file get no
// bar (a silent one that writes nothing), and --no-progress wins over
// everything.
func TestProgressOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	require.NoError(t, err)
	defer f.Close()
	var buf bytes.Buffer
	for _, errOut := range []any{&buf, w, f} {
		a := &app{errOut: errOut.(interface{ Write([]byte) (int, error) })}
		require.False(t, a.progressShown(), "%T", errOut)
		bar := a.progress(10, "work")
		require.NoError(t, bar.Add(5))
		endBar(bar)
	}
	require.Empty(t, buf.String(), "a silent bar writes nothing")
	st, err := f.Stat()
	require.NoError(t, err)
	require.Zero(t, st.Size())
	require.False(t, (&app{errOut: os.Stderr, noProgress: true}).progressShown())
}

// TestBarWriterKeepsLinesWhole: results and a bar drawn on one terminal
// (bench's shape: a phase's line printed in two writes around the work,
// the bar moved between lines) leave the results on screen exactly as
// printed, the bar cleared at the end. The screen is emulated: \r returns
// to the line's start and what follows overwrites it.
func TestBarWriterKeepsLinesWhole(t *testing.T) {
	t.Parallel()
	var tty bytes.Buffer // stdout and stderr on one terminal
	bar := newBar(&tty, 4, "bench")
	out := &barWriter{w: &tty, bar: bar}
	var want []string
	for _, store := range []string{"sqlite", "postgres"} {
		fmt.Fprintf(out, "[%s]\n", store)
		want = append(want, "["+store+"]")
		for i, shape := range []string{"drain", "mixed"} {
			bar.Describe("bench: " + store + " " + shape)
			fmt.Fprintf(out, "  %-6s %7d runs ... ", shape, 1000)
			fmt.Fprintf(out, "%ds: %d runs/s\n", i+1, 1000/(i+1))
			want = append(want, fmt.Sprintf("  %-6s %7d runs ... %ds: %d runs/s", shape, 1000, i+1, 1000/(i+1)))
			require.NoError(t, bar.Add(1))
		}
	}
	require.NoError(t, bar.Finish())
	require.Contains(t, tty.String(), "bench: postgres mixed", "the bar was drawn")
	require.Equal(t, want, screen(tty.String()))
}

// screen is what a terminal shows after s: lines, with \r overwriting
// from the line's start, trailing blanks and empty last lines dropped.
func screen(s string) []string {
	var lines []string
	var line []rune
	col := 0
	flush := func() {
		lines = append(lines, strings.TrimRight(string(line), " "))
		line, col = nil, 0
	}
	for _, r := range s {
		switch r {
		case '\n':
			flush()
		case '\r':
			col = 0
		default:
			if col < len(line) {
				line[col] = r
			} else {
				line = append(line, r)
			}
			col++
		}
	}
	flush()
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
