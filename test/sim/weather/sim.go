// SPDX-License-Identifier: Apache-2.0

// Package weather plays the paper's three-agent weather system (a weather agent
// that transfers to a greeting and a farewell agent) and traces it the way
// Google ADK does, through the OpenTelemetry SDK: an invocation root per user
// turn, invoke_agent spans carrying the conversation, call_llm spans, and
// execute_tool spans, transfers being the tool transfer_to_agent with the
// target in gcp.vertex.agent.tool_call_args.
package weather

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Profile is how well the agents behave.
type Profile string

const (
	// Strong agents always transfer back after greeting or saying goodbye.
	Strong Profile = "strong"
	// Weak agents make the paper's mistakes in about 3 conversations of 10:
	// after its hello (or goodbye) the sub-agent transfers to itself and
	// keeps control into the next user turn.
	Weak Profile = "weak"
)

const (
	weatherAgent  = "weather_agent_v2"
	greetingAgent = "greeting_agent"
	farewellAgent = "farewell_agent"
)

// Conversation is one scripted conversation: a greeting, a weather question,
// a goodbye; whether it goes wrong is drawn from the profile.
type Conversation struct {
	ID         string
	Profile    Profile
	BadHello   bool // the greeting agent transfers to itself after its hello
	BadGoodbye bool // the farewell agent transfers to itself after its goodbye
	// KeepsControl: the greeting agent says hello and answers in text without
	// transferring back; ADK gives every later turn to it, and it answers
	// them in text too. The commonest real mistake: nothing in any one turn
	// is wrong, only the conversation as a whole.
	KeepsControl bool
}

// NewConversation draws a conversation of the profile.
func NewConversation(id string, p Profile, r *rand.Rand) Conversation {
	c := Conversation{ID: id, Profile: p}
	if p == Weak && r.IntN(10) < 3 {
		if r.IntN(2) == 0 {
			c.BadHello = true
		} else {
			c.BadGoodbye = true
		}
	}
	return c
}

// Faulty reports whether the conversation makes a mistake.
func (c Conversation) Faulty() bool { return c.BadHello || c.BadGoodbye || c.KeepsControl }

// player emits spans with explicit, strictly increasing timestamps, so the
// events' order is exact and a conversation plays in no time.
type player struct {
	tracer trace.Tracer
	conv   Conversation
	clock  time.Time
	agent  string // the agent in control
}

func (p *player) tick() time.Time {
	p.clock = p.clock.Add(time.Millisecond)
	return p.clock
}

// Play traces the conversation's three user turns, starting at start. As an
// application would, it puts the conversation id in the baggage of every
// turn; ADK itself writes it on invoke_agent spans only, and a tracer
// provider with a BaggageSpanProcessor copies it onto every span.
func (c Conversation) Play(ctx context.Context, tp trace.TracerProvider, start time.Time) {
	ctx = WithConversation(ctx, c.ID)
	p := &player{tracer: tp.Tracer("gcp.vertex.agent"), conv: c, clock: start, agent: weatherAgent}
	p.turn(ctx, func(ctx context.Context) { p.visit(ctx, greetingAgent, "say_hello", c.BadHello) })
	p.turn(ctx, func(ctx context.Context) { p.tool(ctx, "get_weather", map[string]any{"city": "London"}) })
	p.turn(ctx, func(ctx context.Context) { p.visit(ctx, farewellAgent, "say_goodbye", c.BadGoodbye) })
}

// turn is one user turn: a trace of its own. An agent left in control by a
// mistake first hands back to the weather agent, unless it keeps control:
// then it answers in text, whatever the user asked.
func (p *player) turn(ctx context.Context, body func(context.Context)) {
	ctx, root := p.tracer.Start(ctx, "invocation", trace.WithTimestamp(p.tick()), trace.WithNewRoot())
	ctx, agent := p.invokeAgent(ctx, p.agent)
	switch {
	case p.conv.KeepsControl && p.agent == greetingAgent:
		p.llm(ctx)
		agent.End(trace.WithTimestamp(p.tick()))
		root.End(trace.WithTimestamp(p.tick()))
		return
	case p.agent != weatherAgent:
		p.transfer(ctx, weatherAgent)
		agent.End(trace.WithTimestamp(p.tick()))
		ctx, agent = p.invokeAgent(trace.ContextWithSpan(ctx, root), weatherAgent)
	}
	body(ctx)
	agent.End(trace.WithTimestamp(p.tick()))
	root.End(trace.WithTimestamp(p.tick()))
}

// visit transfers to a sub-agent that calls its tool and transfers back (or,
// by mistake, to itself, or not at all: either way it keeps control).
func (p *player) visit(ctx context.Context, sub, tool string, mistake bool) {
	p.transfer(ctx, sub)
	ctx, agent := p.invokeAgent(ctx, sub)
	p.tool(ctx, tool, map[string]any{})
	switch {
	case sub == greetingAgent && p.conv.KeepsControl:
		p.llm(ctx) // a text answer, no transfer
		p.agent = sub
	case mistake:
		p.transfer(ctx, sub)
		p.agent = sub
	default:
		p.transfer(ctx, weatherAgent)
		p.agent = weatherAgent
	}
	agent.End(trace.WithTimestamp(p.tick()))
}

func (p *player) invokeAgent(ctx context.Context, name string) (context.Context, trace.Span) {
	return p.tracer.Start(ctx, "invoke_agent "+name, trace.WithTimestamp(p.tick()), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.agent.name", name),
		attribute.String("gen_ai.conversation.id", p.conv.ID),
	))
}

func (p *player) transfer(ctx context.Context, to string) {
	p.tool(ctx, "transfer_to_agent", map[string]any{"agent_name": to})
}

// llm is a model call.
func (p *player) llm(ctx context.Context) {
	_, llm := p.tracer.Start(ctx, "call_llm", trace.WithTimestamp(p.tick()),
		trace.WithAttributes(attribute.String("gcp.vertex.agent.session_id", p.conv.ID)))
	llm.End(trace.WithTimestamp(p.tick()))
}

// tool is a model call that asks for the tool, then the tool's span.
func (p *player) tool(ctx context.Context, name string, args map[string]any) {
	p.llm(ctx)
	b, _ := json.Marshal(args)
	_, span := p.tracer.Start(ctx, "execute_tool "+name, trace.WithTimestamp(p.tick()), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", name),
		attribute.String("gcp.vertex.agent.tool_call_args", string(b)),
	))
	span.End(trace.WithTimestamp(p.tick()))
}
