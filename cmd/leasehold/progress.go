package main

import (
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressShown says whether long work draws a progress bar: only when
// stderr is a terminal (a pipe, a file or a test's buffer gets none, so
// logs and scripts never see bar frames) and --no-progress is not set.
// The bar goes to stderr, the results to stdout: `leasehold bench … >
// out.txt` keeps a clean file and still shows the bar.
func (a *app) progressShown() bool {
	if a.noProgress {
		return false
	}
	f, ok := a.errOut.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress returns a bar of total steps (-1: a spinner, for work whose
// size is unknown), drawn on stderr, or a silent one that draws nothing
// when progressShown is false — callers use both alike. Call Finish (or
// Exit) when the work ends: a spinner redraws itself from a goroutine
// until then.
func (a *app) progress(total int64, desc string) *progressbar.ProgressBar {
	if !a.progressShown() {
		// Invisible, not DefaultSilent: a silent spinner (total -1) still
		// starts the library's redraw goroutine, which reads the bar's
		// state without its lock (progressbar v3.19.1's IsStarted) and
		// raced with Finish under -race. An invisible bar starts none.
		return progressbar.NewOptions64(total, progressbar.OptionSetWriter(io.Discard),
			progressbar.OptionSetDescription(desc), progressbar.OptionSetVisibility(false))
	}
	return newBar(a.errOut, total, desc)
}

// newBar is the one bar style of the CLI.
func newBar(w io.Writer, total int64, desc string) *progressbar.ProgressBar {
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(), // a spinner's count reads (0/-); harmless
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(total > 0),
		// No throttle: every bar here moves by coarse steps (a batch, a
		// seed, a phase), and a redraw right after printed results is
		// what keeps the bar visible (barWriter).
		progressbar.OptionClearOnFinish(), // the results printed after it stay readable
		progressbar.OptionSetWidth(30),    // not full width: a terminal that reports no size (a CI pty) would get a bar of none
	)
	_ = bar.RenderBlank() // shown at once, before the first step ends
	return bar
}

// endBar ends a bar the work left unfinished (an error, a cancel). The
// bar clears its line when it finishes (OptionClearOnFinish), so the error
// printed next starts on a clean one, and finishing stops a spinner's
// redraw goroutine. Deferred right after progress; a no-op after Finish.
func endBar(b *progressbar.ProgressBar) {
	if !b.IsFinished() {
		_ = b.Finish()
	}
}

// phases returns a bar over a command's n phases, and out wrapped so the
// results the command prints between phases (on stdout, often the same
// terminal) do not land on the bar's line: the bar is cleared before each
// write and drawn again after it. Describe names the phase starting; Add(1)
// marks it done.
func (a *app) phases(out io.Writer, desc string, n int) (*progressbar.ProgressBar, io.Writer) {
	bar := a.progress(int64(n), desc)
	if !a.progressShown() {
		return bar, out
	}
	return bar, &barWriter{w: out, bar: bar}
}

// barWriter writes around a bar drawn on another stream of the same
// terminal. A line printed in two writes ("drain ... " then the figure)
// is left whole: the bar is cleared only at the start of a line and drawn
// again only after one ends. The caller moves the bar (Add, Describe)
// between lines, not in the middle of one.
type barWriter struct {
	w       io.Writer
	bar     *progressbar.ProgressBar
	partial bool // the last write did not end its line
}

func (b *barWriter) Write(p []byte) (int, error) {
	if !b.partial {
		_ = b.bar.Clear()
	}
	n, err := b.w.Write(p)
	b.partial = len(p) > 0 && p[len(p)-1] != '\n'
	if !b.partial && !b.bar.IsFinished() {
		_ = b.bar.RenderBlank()
	}
	return n, err
}
