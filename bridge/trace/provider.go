package trace

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// ProviderOptions configures [NewProvider]. The zero value exports to the
// OTLP/HTTP endpoint the OTEL_* variables name, as the service "mcpbridge".
type ProviderOptions struct {
	// ServiceName is the service.name resource attribute; "" means
	// "mcpbridge". OTEL_SERVICE_NAME, or service.name in
	// OTEL_RESOURCE_ATTRIBUTES, takes precedence.
	ServiceName string
	// ServiceVersion is the service.version resource attribute; "" means
	// none.
	ServiceVersion string
	// Exporter receives the finished spans, in batches. nil means OTLP over
	// HTTP (protobuf), configured by the standard variables:
	// OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318; the
	// spans go to its /v1/traces) or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
	// (used as is), ..._HEADERS, ..._TIMEOUT, ..._COMPRESSION,
	// ..._CERTIFICATE, ..._CLIENT_CERTIFICATE, ..._CLIENT_KEY, each with
	// its ..._TRACES_ form, which wins. A variable that does not parse is
	// an error here, not a silently different exporter.
	Exporter sdktrace.SpanExporter
}

// Provider is the process's tracer provider and its exporter. The sampler
// is the SDK's (parent-based, always on, or OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG), as are the batching limits (OTEL_BSP_*). A nil
// *Provider is tracing turned off.
type Provider struct {
	sdk *sdktrace.TracerProvider
	// plainHost is the OTLP endpoint's host when credentials go to it
	// over plain http and it is not this machine (see PlainCredentialsHost).
	plainHost string
}

// NewProvider builds the tracer provider. Nothing is sent until a span
// ends; an unreachable collector costs dropped spans and an error reported
// through OpenTelemetry's error handler, never a failed call.
func NewProvider(ctx context.Context, opts ProviderOptions) (*Provider, error) {
	name := opts.ServiceName
	if name == "" {
		name = "mcpbridge"
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", name)}
	if opts.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", opts.ServiceVersion))
	}
	// Later detectors win: the environment overrides the defaults.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(attrs...), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("tracing resource: %w", err)
	}
	exp := opts.Exporter
	var plainHost string
	if exp == nil {
		cfg, err := otlpConfigFromEnv(os.Getenv)
		if err != nil {
			return nil, fmt.Errorf("OTLP trace exporter: %w", err)
		}
		exp = newOTLPExporter(cfg)
		plainHost = cfg.plainCredentialsHost()
	}
	return &Provider{sdk: sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), plainHost: plainHost}, nil
}

// PlainCredentialsHost is the host of the OTLP endpoint when the default
// exporter sends it credentials (OTEL_EXPORTER_OTLP_HEADERS, a query, a
// userinfo) over plain http and it is not this machine, for a warning;
// "" otherwise, and for a nil p.
func (p *Provider) PlainCredentialsHost() string {
	if p == nil {
		return ""
	}
	return p.plainHost
}

// TracerProvider is the provider to hand to [Middleware] and [Transport];
// nil (off) for a nil p.
func (p *Provider) TracerProvider() oteltrace.TracerProvider {
	if p == nil {
		return nil
	}
	return p.sdk
}

// Shutdown exports the spans still buffered and stops the exporter, within
// ctx. A nil p has nothing to do.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	if err := p.sdk.Shutdown(ctx); err != nil {
		return fmt.Errorf("flushing traces: %w", err)
	}
	return nil
}
