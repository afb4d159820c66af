package main

import (
	"io"
	"os"
	"time"

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
		return progressbar.DefaultSilent(total, desc)
	}
	return newBar(a.errOut, total, desc)
}

// newBar is the one bar style of the CLI.
func newBar(w io.Writer, total int64, desc string) *progressbar.ProgressBar {
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(total > 0),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(), // the results printed after it stay readable
		progressbar.OptionFullWidth(),
	)
	_ = bar.RenderBlank() // shown at once, before the first step ends
	return bar
}
