package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServeTracingIsOffUnlessConfigured: no OTLP endpoint in the
// environment, no tracer provider (and no cost); with one, an OTLP/HTTP
// provider whose stop flushes and returns.
func TestServeTracingIsOffUnlessConfigured(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tp, stop, err := serveTracing(context.Background())
	require.NoError(t, err)
	require.Nil(t, tp)
	require.NoError(t, stop(context.Background()))

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1") // nothing listens: no span is sent
	tp, stop, err = serveTracing(context.Background())
	require.NoError(t, err)
	require.NotNil(t, tp)
	require.NoError(t, stop(context.Background()), "nothing batched: stop has nothing to send")
}
