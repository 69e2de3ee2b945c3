// SPDX-License-Identifier: Apache-2.0

package weather

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// conversationOf is each span's conversation attribute, by span name.
func conversationOf(spans tracetest.SpanStubs) map[string]int {
	with := map[string]int{}
	for _, s := range spans {
		for _, a := range s.Attributes {
			if string(a.Key) == ConversationKey && a.Value.AsString() == "c-1" {
				with[s.Name]++
			}
		}
	}
	return with
}

func TestBaggagePutsTheConversationOnEverySpan(t *testing.T) {
	c := Conversation{ID: "c-1", Profile: Weak, BadHello: true}

	// ADK alone: the conversation on invoke_agent spans only.
	exp := tracetest.NewInMemoryExporter()
	c.Play(context.Background(), sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)), time.Unix(0, 0))
	spans := exp.GetSpans()
	with := conversationOf(spans)
	n := 0
	for name, k := range with {
		if len(name) < len("invoke_agent") || name[:len("invoke_agent")] != "invoke_agent" {
			t.Errorf("without the processor, %d %q spans carry the conversation", k, name)
		}
		n += k
	}
	if n == 0 || n == len(spans) {
		t.Fatalf("without the processor, %d of %d spans carry the conversation; want the invoke_agent spans only", n, len(spans))
	}

	// With the baggage processor: every span.
	exp.Reset()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(BaggageSpanProcessor{Keys: []string{ConversationKey}}), sdktrace.WithSyncer(exp))
	c.Play(context.Background(), tp, time.Unix(0, 0))
	spans = exp.GetSpans()
	n = 0
	for _, k := range conversationOf(spans) {
		n += k
	}
	if n != len(spans) || n == 0 {
		t.Errorf("with the processor, %d of %d spans carry the conversation; want all", n, len(spans))
	}
}

func TestWithConversationKeepsOtherBaggage(t *testing.T) {
	ctx := WithConversation(context.Background(), "a b;c") // characters baggage must escape
	ctx = WithConversation(ctx, "c-2")
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(BaggageSpanProcessor{Keys: []string{ConversationKey, "absent"}}), sdktrace.WithSyncer(exp))
	_, s := tp.Tracer("t").Start(ctx, "x")
	s.End()
	got := exp.GetSpans()[0].Attributes
	if len(got) != 1 || got[0].Value.AsString() != "c-2" {
		t.Errorf("attributes = %v; want the last conversation id alone", got)
	}
}
