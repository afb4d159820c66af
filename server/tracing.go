package server

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceRequest starts the server span of one API call when the server has
// a tracer provider (Config.TracerProvider; `leasehold serve` sets one when
// OTEL_EXPORTER_OTLP_ENDPOINT is configured). It continues a caller's W3C
// traceparent, names the span after the route pattern (bounded, never the
// raw path) and returns the request carrying it: the store writes the
// call makes become its children (driver/tracing.go). end records the
// status.
func (s *Server) traceRequest(r *http.Request, pattern string) (*http.Request, func(status int)) {
	if s.tracer == nil {
		return r, func(int) {}
	}
	ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	// pattern is the mux's "METHOD /path/{id}" (or "unrouted").
	route := pattern
	if _, p, ok := strings.Cut(pattern, " "); ok {
		route = p
	}
	ctx, span := s.tracer.Start(ctx, r.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("http.route", route)))
	return r.WithContext(ctx), func(status int) {
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
		span.End()
	}
}
