package scheduler

import (
	"context"
	"log/slog"
	"strings"
)

// LogSignals is a slog handler for tests that sends each record's text,
// with its attributes, to the channel of the first prefix it starts with
// (a full channel drops it). Exported to the package's external tests.
type LogSignals map[string]chan string

func (s LogSignals) Enabled(context.Context, slog.Level) bool { return true }
func (s LogSignals) WithAttrs([]slog.Attr) slog.Handler       { return s }
func (s LogSignals) WithGroup(string) slog.Handler            { return s }
func (s LogSignals) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
	for prefix, ch := range s {
		if strings.HasPrefix(r.Message, prefix) {
			select {
			case ch <- b.String():
			default:
			}
		}
	}
	return nil
}
