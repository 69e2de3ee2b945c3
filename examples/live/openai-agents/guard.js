// agentguard's pre-call guard for the OpenAI Agents SDK (JS), traced through
// OpenInference: it asks the collector's decisions endpoint (through
// ../shared/decisions.js) before every tool call and every hand-off, and
// keeps a denied one from running. To use it in your own agent, copy this
// file and ../shared/decisions.js (beside it, or change the import below).
//
//   const spans = new GuardSpans();                 // an OTel span processor
//   const provider = new BasicTracerProvider({ spanProcessors: [spans, ...yours] });
//   setTraceProcessors([spans.wrap(new OpenInferenceTracingProcessor({ tracerProvider: provider }))]);
//   const guard = new AgentguardGuard({ spans, flush: () => provider.forceFlush() });
//   guard.protect([agentA, agentB]);                // every tool and hand-off of these agents
//   await context.with(setSession(context.active(), { sessionId }), () => runner.run(agentA, input));
//
// The group is the conversation's OpenInference session ID, the session.id
// every span carries (setSession in the active OTel context, with an
// AsyncLocalStorage context manager; else the run's groupId): the collector
// must group by it (group_by: conversation).
//   tool call   a tool input guardrail (each function tool's inputGuardrails)
//   hand-off    the hand-off, cloned with an onInvokeHandoff that asks first
//               ({"transfer_to": agent}); on deny it hands off to the agent
//               that asked instead (control stays), and its inputFilter
//               rewrites the hand-off's result. (A guarded hand-off always
//               has an inputFilter: the runner's handoffInputFilter does not
//               apply to it, and it cannot run with server-managed history,
//               conversationId or previousResponseId.)
//   deny         the call does not run; the model gets
//                "Denied by agentguard: <explanations>" as its result
//   warn, allow  the call runs (a warning is logged)
//   no answer    as AGENTGUARD_ON_ERROR says (allow by default)
//
// The SDK still records a span for a call the guard kept from running (the
// rejected tool's function span; the redirected hand-off's span, "handoff
// to <the agent that asked>"). The guard marks its OTel span with
// agentguard.decision = "deny", and the collector does not count such a
// span as something the agent did. To reach that OTel span, GuardSpans.wrap
// learns which OTel span OpenInference starts for each SDK span.
// The settings (AGENTGUARD_DECISIONS, AGENTGUARD_ON_ERROR,
// AGENTGUARD_TIMEOUT_MS) are ../shared/decisions.js's.
import { ToolGuardrailFunctionOutputFactory, defineToolInputGuardrail, getCurrentSpan, getCurrentTrace, getHandoff } from '@openai/agents';
import { getSession } from '@arizeai/openinference-core';
import { context, trace } from '@opentelemetry/api';
import { DecisionsClient, flushGlobal } from '../shared/decisions.js';

/** The attribute on the OTel span of a call the guard kept from running. */
export const DECISION_ATTRIBUTE = 'agentguard.decision';

/** The attribute the collector groups by (OpenInference's session ID). */
const SESSION_ID = 'session.id';

/**
 * GuardSpans is the guard's OTel span processor. It remembers the last span
 * of each conversation (session.id) that ended, the span to ask after, and,
 * with wrap, the OTel span of each SDK span still open (for the newest
 * 10000 of each).
 */
export class GuardSpans {
  constructor(limit = 10000) {
    this.limit = limit;
    this.lastEnded = new Map(); // session ID -> span ID
    this.open = new Map(); // SDK span ID -> OTel span
    this.starting = undefined; // the SDK span whose OTel span is being started
  }

  /** last is the ID of the last span of the conversation that ended, if any. */
  last(sessionId) {
    return this.lastEnded.get(sessionId);
  }

  /** otelSpan is the OTel span of an open SDK span, if known. */
  otelSpan(sdkSpanId) {
    return this.open.get(sdkSpanId);
  }

  /**
   * wrap returns the SDK TracingProcessor `processor` (OpenInference's)
   * unchanged but for this: while it handles an SDK span's start, the OTel
   * span that starts is that SDK span's. OpenInference starts it
   * synchronously in onSpanStart, and the OTel SDK calls onStart below
   * synchronously from startSpan, so no other span can come between.
   */
  wrap(processor) {
    const spans = this;
    return {
      start: () => processor.start?.(),
      onTraceStart: (t) => processor.onTraceStart(t),
      onTraceEnd: (t) => processor.onTraceEnd(t),
      onSpanStart(span) {
        spans.starting = span.spanId;
        try {
          return processor.onSpanStart(span);
        } finally {
          spans.starting = undefined;
        }
      },
      async onSpanEnd(span) {
        try {
          await processor.onSpanEnd(span);
        } finally {
          spans.open.delete(span.spanId);
        }
      },
      shutdown: (timeout) => processor.shutdown(timeout),
      forceFlush: () => processor.forceFlush(),
    };
  }

  onStart(span) {
    if (this.starting === undefined) return;
    remember(this.open, this.starting, span, this.limit);
    this.starting = undefined; // only the first span started is the SDK span's
  }

  onEnd(span) {
    const session = span.attributes[SESSION_ID];
    if (typeof session === 'string') remember(this.lastEnded, session, span.spanContext().spanId, this.limit);
  }

  forceFlush() {
    return Promise.resolve();
  }

  shutdown() {
    return Promise.resolve();
  }
}

/** remember sets key in a map kept to the newest limit keys set. */
function remember(map, key, value, limit) {
  map.delete(key); // re-inserted: the map's order is by last set
  map.set(key, value);
  if (map.size > limit) map.delete(map.keys().next().value);
}

export class AgentguardGuard {
  /**
   * @param {object} o
   * @param {GuardSpans} [o.spans] the processor on the tracer provider, its wrap around OpenInference's; without it
   *   no after_span_id is sent and denied calls' spans are not marked (the collector would count them)
   * @param {() => Promise<void>} [o.flush] flushes the spans (default: the global tracer provider's forceFlush)
   * The other options (url, onError, timeoutMs, onDecision, log) are DecisionsClient's (../shared/decisions.js).
   */
  constructor({ spans, flush = () => flushGlobal(trace), ...client } = {}) {
    this.spans = spans;
    this.client = new DecisionsClient({
      flush,
      ...client,
      transferVerb: 'hand-off to',
      noSession: "no session ID (setSession in the active OTel context, or the run's groupId)",
    });
    this.log = this.client.log;
    // One guardrail for every tool: rejectContent skips the tool, and the
    // model gets the message as the tool's result.
    this.toolGuardrail = defineToolInputGuardrail({
      name: 'agentguard',
      run: async ({ agent, toolCall }) => {
        const denial = await this.check(agent.name, { tool: toolCall.name, arguments: parseArguments(toolCall.arguments) }, 'function');
        return denial === undefined ? ToolGuardrailFunctionOutputFactory.allow() : ToolGuardrailFunctionOutputFactory.rejectContent(denial);
      },
    });
  }

  /** protect guards every function tool and every hand-off of the agents. */
  protect(agents) {
    for (const agent of agents) {
      for (const t of agent.tools) {
        if (t.type === 'function' && !(t.inputGuardrails ?? []).includes(this.toolGuardrail)) {
          t.inputGuardrails = [...(t.inputGuardrails ?? []), this.toolGuardrail];
        }
      }
      agent.handoffs = agent.handoffs.map((h) => this.handoff(agent, h));
    }
  }

  /**
   * handoff is the hand-off h (a Handoff or an Agent) of agent `from`,
   * asking first. On deny the SDK hands off to `from` itself: control stays,
   * and the inputFilter makes the hand-off's result the denial. (Throwing
   * instead would end the whole run.)
   */
  handoff(from, h) {
    const original = getHandoff(h);
    const denials = new WeakMap(); // run context -> the denial of its hand-off under way
    return original.clone({
      onInvokeHandoff: async (runContext, args) => {
        const denial = await this.check(from.name, { transfer_to: original.agentName }, 'handoff');
        if (denial === undefined) return original.onInvokeHandoff(runContext, args);
        denials.set(runContext, `${denial} (no hand-off: you are still ${from.name})`);
        return from;
      },
      inputFilter: (data) => {
        const denial = denials.get(data.runContext);
        if (denial === undefined) return original.inputFilter ? original.inputFilter(data) : data;
        denials.delete(data.runContext);
        const out = data.newItems.at(-1); // the hand-off's result, just made
        if (out?.type === 'handoff_output_item') out.rawItem = { ...out.rawItem, output: { type: 'text', text: denial } };
        return data;
      },
    });
  }

  /**
   * check asks about an action of agent's, inside the SDK span of the call
   * (spanType: function or handoff), and resolves to undefined when the call
   * may run, or to the denial the model is to get instead (its span marked).
   */
  async check(agent, action, spanType) {
    const sdkSpan = getCurrentSpan();
    const session = getSession(context.active())?.sessionId ?? getCurrentTrace()?.groupId ?? undefined;
    const after = this.spans?.last(session); // before the flush: every span that ended is in it
    const denial = await this.client.decide(session, agent, action, after);
    if (denial !== undefined) this.markDenied(sdkSpan, spanType, this.client.describe(session, agent, action));
    return denial;
  }

  /** markDenied sets agentguard.decision=deny on the OTel span of the call's SDK span. */
  markDenied(sdkSpan, spanType, what) {
    const span = sdkSpan?.spanData?.type === spanType ? this.spans?.otelSpan(sdkSpan.spanId) : undefined;
    if (span) {
      span.setAttribute(DECISION_ATTRIBUTE, 'deny');
    } else {
      this.log(`agentguard: no ${spanType} span to mark for ${what}: the collector will count it as done`);
    }
  }
}

/** parseArguments reads a call's JSON arguments; the endpoint gets {} for none, or the text if not JSON. */
function parseArguments(text) {
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    return { _raw: text };
  }
}
