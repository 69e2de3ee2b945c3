// SPDX-License-Identifier: Apache-2.0

package weather

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
)

// Conversations are strong conversations of the strong profile, weak of the
// weak one (their mistakes drawn from seed), and keeps whose greeting agent
// keeps control, named strong-01, weak-01, keeps-01, ...
func Conversations(strong, weak, keeps int, seed uint64) []Conversation {
	r := rand.New(rand.NewPCG(seed, seed))
	var out []Conversation
	for i := range strong {
		out = append(out, NewConversation(fmt.Sprintf("strong-%02d", i+1), Strong, r))
	}
	for i := range weak {
		out = append(out, NewConversation(fmt.Sprintf("weak-%02d", i+1), Weak, r))
	}
	for i := range keeps {
		out = append(out, Conversation{ID: fmt.Sprintf("keeps-%02d", i+1), Profile: Weak, KeepsControl: true})
	}
	return out
}

// Export plays the conversations (the i-th starting i seconds after now)
// through the OpenTelemetry SDK, exported over OTLP/HTTP to addr (host:port)
// as an instrumented agent would. With baggage, a BaggageSpanProcessor copies
// the conversation id onto every span, as docs/scaling.md says an
// application does; without, it is on ADK's invoke_agent spans only.
func Export(ctx context.Context, addr string, convs []Conversation, baggage bool) error {
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(addr), otlptracehttp.WithInsecure())
	if err != nil {
		return err
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("weather_agent_team")))}
	if baggage {
		opts = append(opts, sdktrace.WithSpanProcessor(BaggageSpanProcessor{Keys: []string{ConversationKey}}))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	base := time.Now()
	for i, c := range convs {
		c.Play(ctx, tp, base.Add(time.Duration(i)*time.Second))
	}
	return tp.Shutdown(ctx)
}
