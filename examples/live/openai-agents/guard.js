// agentguard's pre-call guard for the OpenAI Agents SDK (JS), traced through
// OpenInference: it asks the collector's decisions endpoint (the
// riskendpoint extension, POST /v1/groups/{group}/decisions) before every
// tool call and every hand-off, and keeps a denied one from running.
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
// must group by it (group_by: conversation). Before each call the guard
// flushes the tracer provider (so that the collector has every span that
// ended), then asks with the call as the action and the last span of the
// conversation that ended as after_span_id (so that the answer covers it,
// even if a timer's export of an earlier turn is still on its way).
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
//   no answer    (unreachable, timeout, an error status) the call runs or not
//                as AGENTGUARD_ON_ERROR says: allow (the default) or deny;
//                the log says which
//
// The SDK still records a span for a call the guard kept from running (the
// rejected tool's function span; the redirected hand-off's span, "handoff
// to <the agent that asked>"). The guard marks its OTel span with
// agentguard.decision = "deny", and the collector does not count such a
// span as something the agent did. To reach that OTel span, GuardSpans.wrap
// learns which OTel span OpenInference starts for each SDK span.
//
// Environment: AGENTGUARD_DECISIONS, the endpoint's base URL
// (http://127.0.0.1:4320); AGENTGUARD_ON_ERROR, allow or deny;
// AGENTGUARD_TIMEOUT_MS, how long to wait for an answer (1000).
import { ToolGuardrailFunctionOutputFactory, defineToolInputGuardrail, getCurrentSpan, getCurrentTrace, getHandoff } from '@openai/agents';
import { getSession } from '@arizeai/openinference-core';
import { context, trace } from '@opentelemetry/api';

/** The attribute on the OTel span of a call the guard kept from running. */
export const DECISION_ATTRIBUTE = 'agentguard.decision';

/** The attribute the collector groups by (OpenInference's session ID). */
const SESSION_ID = 'session.id';

/** DENIED starts every result the model gets for a call the guard denied. */
export const DENIED = 'Denied by agentguard';

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
   * @param {string} [o.url] the decisions endpoint's base URL (AGENTGUARD_DECISIONS)
   * @param {'allow'|'deny'} [o.onError] what to do without an answer (AGENTGUARD_ON_ERROR, allow)
   * @param {number} [o.timeoutMs] how long to wait for an answer (AGENTGUARD_TIMEOUT_MS, 1000)
   * @param {(d: object) => void} [o.onDecision] told of every decision, with the session, agent and action
   * @param {(line: string) => void} [o.log] where the guard says what it did (console.error)
   */
  constructor({
    spans,
    flush = defaultFlush,
    url = process.env.AGENTGUARD_DECISIONS,
    onError = process.env.AGENTGUARD_ON_ERROR || 'allow',
    timeoutMs = Number(process.env.AGENTGUARD_TIMEOUT_MS || 1000),
    onDecision = () => {},
    log = (line) => console.error(line),
  } = {}) {
    if (!url) throw new Error('agentguard: no decisions endpoint (set AGENTGUARD_DECISIONS, e.g. http://127.0.0.1:4320)');
    if (onError !== 'allow' && onError !== 'deny') {
      throw new Error(`agentguard: AGENTGUARD_ON_ERROR is ${JSON.stringify(onError)}: allow or deny`);
    }
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new Error(`agentguard: AGENTGUARD_TIMEOUT_MS is ${JSON.stringify(timeoutMs)}: a positive number of milliseconds`);
    }
    this.base = url.replace(/\/+$/, '');
    this.spans = spans;
    this.flush = flush;
    this.onError = onError;
    this.timeoutMs = timeoutMs;
    this.onDecision = onDecision;
    this.log = log;
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
   * may run, or to the denial the model is to get instead.
   */
  async check(agent, action, spanType) {
    const sdkSpan = getCurrentSpan();
    const session = getSession(context.active())?.sessionId ?? getCurrentTrace()?.groupId ?? undefined;
    const what = `${agent} ${describe(action)} (session ${session})`;
    let answer;
    try {
      if (session === undefined) throw new Error('no session ID (setSession in the active OTel context, or the run\'s groupId)');
      answer = await this.ask(session, action);
    } catch (err) {
      const decision = this.onError;
      this.log(`agentguard: no decision for ${what}: ${err.message}; ${decision === 'deny' ? 'denied' : 'allowed'} (AGENTGUARD_ON_ERROR=${decision})`);
      this.onDecision({ session, agent, action, decision, error: err.message });
      if (decision !== 'deny') return undefined;
      this.markDenied(sdkSpan, spanType, what);
      return `${DENIED}: no decision could be had (${err.message})`;
    }
    const reasons = (answer.reasons ?? []).filter((r) => r.effect === answer.decision).map((r) => r.explanation);
    this.onDecision({ session, agent, action, decision: answer.decision, reasons, stale: answer.stale === true });
    switch (answer.decision) {
      case 'deny':
        this.log(`agentguard: denied ${what}: ${reasons.join('; ')}`);
        this.markDenied(sdkSpan, spanType, what);
        return `${DENIED}: ${reasons.join('; ')}`;
      case 'warn':
        this.log(`agentguard: warning on ${what}, running it: ${reasons.join('; ')}`);
        return undefined;
      default: // allow
        return undefined;
    }
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

  /**
   * ask flushes the spans, then asks the endpoint after the last span of the
   * conversation that ended. It throws when no answer comes: unreachable,
   * timed out, an error status, or no decision.
   */
  async ask(session, action) {
    const after = this.spans?.last(session);
    const signal = AbortSignal.timeout(this.timeoutMs);
    await Promise.race([
      this.flush(),
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error(`flushing the spans took over ${this.timeoutMs} ms`)))),
    ]);
    const body = { action, ...(after ? { after_span_id: after } : {}) };
    let resp;
    try {
      resp = await fetch(`${this.base}/v1/groups/${encodeURIComponent(session)}/decisions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal,
      });
    } catch (err) {
      throw new Error(signal.aborted ? `no answer within ${this.timeoutMs} ms` : `${this.base} unreachable (${err.cause?.code ?? err.message})`);
    }
    const text = await resp.text();
    if (!resp.ok) throw new Error(`${this.base} answered ${resp.status}: ${text.trim()}`);
    const answer = JSON.parse(text);
    if (!['allow', 'warn', 'deny'].includes(answer?.decision)) {
      throw new Error(`${this.base} answered no decision: ${text.trim()}`);
    }
    return answer;
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

/** defaultFlush flushes the global tracer provider. */
function defaultFlush() {
  const provider = trace.getTracerProvider();
  const real = typeof provider.getDelegate === 'function' ? provider.getDelegate() : provider;
  return typeof real.forceFlush === 'function' ? real.forceFlush() : Promise.resolve();
}

function describe(action) {
  return action.transfer_to !== undefined ? `hand-off to ${action.transfer_to}` : `${action.tool}(${JSON.stringify(action.arguments)})`;
}
