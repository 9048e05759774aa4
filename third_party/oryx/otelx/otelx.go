// Package otelx provides what ory/fosite uses of github.com/ory/x/otelx:
// End, which closes a span and records a returned error on it. It links no
// exporter.
package otelx

import (
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// End records *err (when set) on span and ends it. It is deferred by
// fosite; a panic passes through unchanged.
func End(span trace.Span, err *error) {
	if err != nil && *err != nil {
		span.SetStatus(codes.Error, (*err).Error())
	}
	span.End()
}
