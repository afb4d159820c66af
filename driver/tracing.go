package driver

import (
	"context"
	"reflect"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/leasehold/leasehold/lease"
)

// traceWrite starts a span for a store write (a call whose params carry a
// durability class) when ctx already carries a recording span — a traced
// API call — using that span's provider, so nothing is global and an
// untraced call costs one interface check. The span is named after the
// call ("store RunClaim") and carries its durability class.
func traceWrite[P any](ctx context.Context, p P) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, nil
	}
	c, ok := any(p).(lease.Classed)
	if !ok {
		return ctx, nil // a read
	}
	name := reflect.TypeOf(p).String() // "*driver.RunClaimParams"
	name = strings.TrimSuffix(name[strings.LastIndexByte(name, '.')+1:], "Params")
	return parent.TracerProvider().Tracer("github.com/leasehold/leasehold/driver").Start(ctx, "store "+name,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(durabilityAttr.String(c.Class().String())))
}

// durabilityAttr is a write span's durability class (SPEC §1).
const durabilityAttr = attribute.Key("leasehold.durability")

// endTrace ends a span traceWrite started (nil: none), marking an error.
func endTrace(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
