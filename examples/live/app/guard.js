// agentguard's pre-call guard for Google ADK for TypeScript: a plugin whose
// beforeToolCallback asks the collector's decisions endpoint (through
// ../shared/decisions.js) before every tool call and every transfer (ADK's
// transfer_to_agent tool), and keeps a denied one from running. To use it in
// your own agent, copy this file and ../shared/decisions.js (beside it, or
// change the import below).
//
//   const spans = new GuardSpans();                // a span processor
//   maybeSetOtelProviders([{ spanProcessors: [spans, ...yours] }]);
//   const runner = new InMemoryRunner({ agent, appName,
//     plugins: [new AgentguardPlugin({ spans })] });
//
// The group is the ADK session ID: the collector must group by
// gen_ai.conversation.id. ADK sets it only on its invoke_agent spans, which
// end with the turn: until then the collector cannot tell whose the turn's
// tool calls are, and a question in the middle of a turn would be answered
// without them. So GuardSpans sets it on every span of a run (a user turn,
// one trace) as the span starts.
//   deny         the tool does not run; the model gets
//                {error: "Denied by agentguard: <explanations>"} as its result
//   warn, allow  the tool runs (a warning is logged)
//   no answer    as AGENTGUARD_ON_ERROR says (allow by default)
// The settings (AGENTGUARD_DECISIONS, AGENTGUARD_ON_ERROR,
// AGENTGUARD_TIMEOUT_MS) are ../shared/decisions.js's.
import { BasePlugin } from '@google/adk';
import { trace } from '@opentelemetry/api';
import { DecisionsClient, flushGlobal } from '../shared/decisions.js';

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
   * The other options (url, onError, timeoutMs, onDecision, log) are DecisionsClient's (../shared/decisions.js).
   */
  constructor({ spans, flush = () => flushGlobal(trace), ...client } = {}) {
    super('agentguard');
    this.spans = spans;
    this.client = new DecisionsClient({ flush, ...client });
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
    const after = this.spans?.last(session); // before the flush: every span that ended is in it
    const denial = await this.client.decide(session, toolContext.agentName, actionOf(tool.name, toolArgs), after);
    return denial === undefined ? undefined : { error: denial };
  }
}
