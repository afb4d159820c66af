package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// TestAPICallsAndTheirStoreWritesAreTraced: with a tracer provider, each
// API call is a server span named by its route, carrying its status, and
// each store write it makes is a child span with its durability class; a
// caller's traceparent is continued — on both stores. The SDK's in-memory
// recorder stands in for the OTLP exporter.
func TestAPICallsAndTheirStoreWritesAreTraced(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		b := setup(t, open, leasehold.Config{}, server.Config{TracerProvider: tp})
		b.enqueue(t, "q", `{"n":1}`)
		r := b.claimOne(t, "q", "runner-1")
		b.post(t, runPath(r.ID, "/complete"), map[string]any{"fence": r.Fence})

		const parent = "4bf92f3577b34da6a3ce929d0e0e4736"
		req, err := http.NewRequest(http.MethodGet, b.url+runPath(r.ID, ""), nil)
		require.NoError(t, err)
		req.Header.Set("traceparent", "00-"+parent+"-00f067aa0ba902b7-01")
		resp, err := b.http.Do(req)
		require.NoError(t, err)
		resp.Body.Close()

		spans := rec.Ended()
		byName := map[string]sdktrace.ReadOnlySpan{}
		for _, s := range spans {
			byName[s.Name()] = s
		}
		for _, c := range []struct{ call, write, class string }{
			{"POST /v1/runs", "store RunEnqueue", "sync_critical"},
			{"POST /v1/runs/claim", "store RunClaim", "sync_critical"},
			{"POST /v1/runs/{id}/complete", "store RunComplete", "sync_critical"},
		} {
			call, ok := byName[c.call]
			require.True(t, ok, "no span %q in %v", c.call, names(spans))
			write, ok := byName[c.write]
			require.True(t, ok, "no span %q in %v", c.write, names(spans))
			require.Equal(t, call.SpanContext().SpanID(), write.Parent().SpanID(), "%s is a child of %s", c.write, c.call)
			require.Equal(t, call.SpanContext().TraceID(), write.SpanContext().TraceID())
			require.Contains(t, attrs(write), "leasehold.durability="+c.class)
			require.Contains(t, attrs(call), "http.route="+c.call[len("POST "):])
		}
		require.Contains(t, attrs(byName["POST /v1/runs"]), "http.response.status_code=201")
		get := byName["GET /v1/runs/{id}"]
		require.NotNil(t, get)
		require.Equal(t, parent, get.SpanContext().TraceID().String(), "the caller's trace is continued")
		for _, s := range spans {
			require.NotEqual(t, "store RunGet", s.Name(), "reads are not store-write spans")
		}
	})
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}

func attrs(s sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, a := range s.Attributes() {
		out = append(out, string(a.Key)+"="+a.Value.Emit())
	}
	return out
}
