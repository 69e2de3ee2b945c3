// SPDX-License-Identifier: Apache-2.0

package weather

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ConversationKey is the attribute (and baggage member) that names a
// conversation, as the GenAI semantic conventions spell it.
const ConversationKey = "gen_ai.conversation.id"

// WithConversation puts the conversation id in the context's baggage: what
// an application does when a user's message comes in, before the agent
// framework starts its spans.
func WithConversation(ctx context.Context, id string) context.Context {
	m, err := baggage.NewMemberRaw(ConversationKey, id)
	if err != nil {
		return ctx // an id baggage cannot carry: its spans keep what the framework gives them
	}
	b, err := baggage.FromContext(ctx).SetMember(m)
	if err != nil {
		return ctx
	}
	return baggage.ContextWithBaggage(ctx, b)
}

// BaggageSpanProcessor copies the named baggage members onto every span
// when it starts, so that each span of a turn carries the conversation id:
// a load balancer routing on that attribute sees it whichever span comes
// first in a batch.
type BaggageSpanProcessor struct {
	Keys []string
}

// OnStart copies the baggage members onto the span.
func (p BaggageSpanProcessor) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) {
	b := baggage.FromContext(ctx)
	for _, k := range p.Keys {
		if m := b.Member(k); m.Key() != "" {
			s.SetAttributes(attribute.String(k, m.Value()))
		}
	}
}

// OnEnd does nothing: the attributes were set at the start.
func (BaggageSpanProcessor) OnEnd(sdktrace.ReadOnlySpan) {}

// Shutdown does nothing.
func (BaggageSpanProcessor) Shutdown(context.Context) error { return nil }

// ForceFlush does nothing.
func (BaggageSpanProcessor) ForceFlush(context.Context) error { return nil }
