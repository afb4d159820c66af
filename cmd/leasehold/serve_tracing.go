package main

import (
	"context"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// serveTracing returns `leasehold serve`'s tracer provider: OTLP over HTTP
// when the standard OTEL_EXPORTER_OTLP_ENDPOINT (or …_TRACES_ENDPOINT) is
// set — the exporter reads the rest of the standard OTEL_* variables
// itself (headers, TLS, timeout) — and nil, no tracing, otherwise. stop
// flushes the spans still batched.
func serveTracing(ctx context.Context) (tp trace.TracerProvider, stop func(context.Context) error, err error) {
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil, func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, err
	}
	p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "leasehold"))))
	return p, p.Shutdown, nil
}
