// agentguard's pre-call guard for Google ADK for TypeScript: a plugin that
// asks the collector's decisions endpoint (the riskendpoint extension,
// POST /v1/groups/{group}/decisions) before every tool call and every
// transfer, and keeps a denied one from running.
//
//   const spans = new GuardSpans();                // a span processor
//   maybeSetOtelProviders([{ spanProcessors: [spans, ...yours] }]);
//   const runner = new InMemoryRunner({ agent, appName,
//     plugins: [new AgentguardPlugin({ spans })] });
//
// Before each call it flushes the tracer provider (so that the collector has
// every span that ended), then asks with the call as the action and the last
// span of the conversation that ended as after_span_id (so that the answer
// covers it, even if a timer's export of an earlier turn is still on its way). The group is the ADK session ID: the collector must
// group by gen_ai.conversation.id. ADK sets it only on its invoke_agent
// spans, which end with the turn: until then the collector cannot tell whose
// the turn's tool calls are, and a question in the middle of a turn would be
// answered without them. So GuardSpans sets it on every span of a run (a
// user turn, one trace) as the span starts.
//   deny         the tool does not run; the model gets
//                {error: "Denied by agentguard: <explanations>"} as its result
//   warn, allow  the tool runs (a warning is logged)
//   no answer    (unreachable, timeout, an error status) the tool runs or not
//                as AGENTGUARD_ON_ERROR says: allow (the default) or deny;
//                the log says which
//
// Environment: AGENTGUARD_DECISIONS, the endpoint's base URL
// (http://127.0.0.1:4320); AGENTGUARD_ON_ERROR, allow or deny;
// AGENTGUARD_TIMEOUT_MS, how long to wait for an answer (1000).
import { BasePlugin } from '@google/adk';
import { trace } from '@opentelemetry/api';

/** The tool through which ADK agents hand control to another agent. */
const TRANSFER_TOOL = 'transfer_to_agent';

/** The attribute the collector groups by. */
const CONVERSATION_ID = 'gen_ai.conversation.id';

/**
 * GuardSpans is the guard's span processor: it sets gen_ai.conversation.id
 * on each span of a run the plugin has seen start, and remembers the last
 * span of each conversation that ended, the span to ask after (for the
 * newest 10000 traces and conversations).
 */
export class GuardSpans {
  constructor(limit = 10000) {
    this.limit = limit;
    this.conversation = new Map(); // trace ID -> session ID
    this.lastEnded = new Map(); // session ID -> span ID
  }

  /** startRun says whose the trace is: its spans from now on carry the session ID. */
  startRun(traceId, sessionId) {
    remember(this.conversation, traceId, sessionId, this.limit);
  }

  /** last is the ID of the last span of the conversation that ended, if any. */
  last(sessionId) {
    return this.lastEnded.get(sessionId);
  }

  onStart(span) {
    const session = this.conversation.get(span.spanContext().traceId);
    if (session !== undefined) span.setAttribute(CONVERSATION_ID, session);
  }

  onEnd(span) {
    const { traceId, spanId } = span.spanContext();
    const session = this.conversation.get(traceId);
    if (session !== undefined) remember(this.lastEnded, session, spanId, this.limit);
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

/** actionOf is the decisions endpoint's action for an ADK tool call. */
export function actionOf(toolName, args) {
  return toolName === TRANSFER_TOOL ? { transfer_to: args?.agentName } : { tool: toolName, arguments: args ?? {} };
}

export class AgentguardPlugin extends BasePlugin {
  /**
   * @param {object} o
   * @param {GuardSpans} [o.spans] the processor on the tracer provider; without it no after_span_id is sent, and
   *   within a turn the collector knows the turn's spans only once ADK's invoke_agent spans end
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
    super('agentguard');
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
  }

  /** At the start of each run (a user turn: one trace), say whose the trace is. */
  async beforeRunCallback({ invocationContext }) {
    const active = trace.getActiveSpan()?.spanContext();
    if (active) this.spans?.startRun(active.traceId, invocationContext.session.id);
    return undefined;
  }

  /** Returning an object skips the tool: the model sees it as the tool's result. */
  async beforeToolCallback({ tool, toolArgs, toolContext }) {
    const session = toolContext.sessionId;
    const agent = toolContext.agentName;
    const action = actionOf(tool.name, toolArgs);
    const what = `${agent} ${describe(action)} (session ${session})`;
    let answer;
    try {
      answer = await this.ask(session, action);
    } catch (err) {
      const decision = this.onError;
      this.log(`agentguard: no decision for ${what}: ${err.message}; ${decision === 'deny' ? 'denied' : 'allowed'} (AGENTGUARD_ON_ERROR=${decision})`);
      this.onDecision({ session, agent, action, decision, error: err.message });
      return decision === 'deny' ? { error: `Denied by agentguard: no decision could be had (${err.message})` } : undefined;
    }
    const reasons = (answer.reasons ?? []).filter((r) => r.effect === answer.decision).map((r) => r.explanation);
    this.onDecision({ session, agent, action, decision: answer.decision, reasons, stale: answer.stale === true });
    switch (answer.decision) {
      case 'deny':
        this.log(`agentguard: denied ${what}: ${reasons.join('; ')}`);
        return { error: `Denied by agentguard: ${reasons.join('; ')}` };
      case 'warn':
        this.log(`agentguard: warning on ${what}, running it: ${reasons.join('; ')}`);
        return undefined;
      default: // allow
        return undefined;
    }
  }

  /**
   * ask flushes the spans, then asks the endpoint after the last span of the
   * conversation that ended. It throws when no answer
   * comes: unreachable, timed out, an error status, or no decision.
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

/** defaultFlush flushes the global tracer provider (ADK's, once set up). */
function defaultFlush() {
  const provider = trace.getTracerProvider();
  const real = typeof provider.getDelegate === 'function' ? provider.getDelegate() : provider;
  return typeof real.forceFlush === 'function' ? real.forceFlush() : Promise.resolve();
}

function describe(action) {
  return action.transfer_to !== undefined ? `transfer to ${action.transfer_to}` : `${action.tool}(${JSON.stringify(action.arguments)})`;
}
