// agentguard's pre-call guard for LangGraph JS (traced by OpenInference's
// LangChain instrumentation): a ToolNode subclass that asks the collector's
// decisions endpoint (through ../shared/decisions.js) before every tool call
// and every hand-off (a tool named transfer_to_<agent>), and keeps a denied
// one from running. To use it in your own agent, copy this file and
// ../shared/decisions.js (beside it, or change the import below).
//
//   const spans = new GuardSpans();                       // a span processor
//   const provider = new BasicTracerProvider({ spanProcessors: [spans, ...yours] });
//   new LangChainInstrumentation({ tracerProvider: provider }).manuallyInstrument(CallbackManagerModule);
//   process.env.LANGCHAIN_CALLBACKS_BACKGROUND = 'false'; // spans end before the next node runs
//   const guard = new Agentguard({ spans, flush: () => provider.forceFlush() });
//   createReactAgent({ llm, name, tools: new GuardedToolNode(tools, { guard, agent: name }) });
//
// The group is the thread_id, which OpenInference sets as session.id on
// every span: the collector must group by session.id.
//   deny         the tool does not run, and no TOOL span is recorded; the
//                model gets a ToolMessage (status error) "Denied by
//                agentguard: <explanations>" as the call's result
//   warn, allow  the tool runs (a warning is logged)
//   no answer    as AGENTGUARD_ON_ERROR says (allow by default)
// With LANGCHAIN_CALLBACKS_BACKGROUND left at its default, spans end in the
// background: the flush may miss the last one, and after_span_id name an
// older one.
// The settings (AGENTGUARD_DECISIONS, AGENTGUARD_ON_ERROR,
// AGENTGUARD_TIMEOUT_MS) are ../shared/decisions.js's.
import { ToolMessage } from '@langchain/core/messages';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { DecisionsClient } from '../shared/decisions.js';

/** Hand-off tools are named for the agent they hand to. */
const HANDOFF_PREFIX = 'transfer_to_';

/** The attribute OpenInference sets from the thread_id, which the collector groups by. */
const SESSION_ID = 'session.id';

/**
 * GuardSpans is the guard's span processor: it remembers the last span of
 * each conversation (session.id) that ended, the span to ask after (for the
 * newest 10000 conversations). OpenInference sets session.id as a span ends.
 */
export class GuardSpans {
  constructor(limit = 10000) {
    this.limit = limit;
    this.lastEnded = new Map(); // session ID -> span ID
  }

  /** last is the ID of the last span of the conversation that ended, if any. */
  last(sessionId) {
    return this.lastEnded.get(sessionId);
  }

  onStart() {}

  onEnd(span) {
    const session = span.attributes[SESSION_ID];
    if (typeof session !== 'string') return;
    this.lastEnded.delete(session); // re-inserted: the map's order is by last set
    this.lastEnded.set(session, span.spanContext().spanId);
    if (this.lastEnded.size > this.limit) this.lastEnded.delete(this.lastEnded.keys().next().value);
  }

  forceFlush() {
    return Promise.resolve();
  }

  shutdown() {
    return Promise.resolve();
  }
}

/** actionOf is the decisions endpoint's action for a LangChain tool call. */
export function actionOf(call) {
  return call.name.startsWith(HANDOFF_PREFIX)
    ? { transfer_to: call.name.slice(HANDOFF_PREFIX.length) }
    : { tool: call.name, arguments: call.args ?? {} };
}

/** Agentguard asks the decisions endpoint; GuardedToolNode acts on its answer. */
export class Agentguard {
  /**
   * @param {object} o
   * @param {GuardSpans} [o.spans] the processor on the tracer provider; without it no after_span_id is sent
   * @param {() => Promise<void>} o.flush flushes the spans (the tracer provider's forceFlush)
   * The other options (url, onError, timeoutMs, onDecision, log) are DecisionsClient's (../shared/decisions.js).
   */
  constructor({ spans, ...client } = {}) {
    this.spans = spans;
    this.client = new DecisionsClient(client);
  }

  /**
   * denial decides on `agent`'s call in conversation `session`: the
   * ToolMessage to answer it with instead of running it, or null to run it.
   */
  async denial(session, agent, call) {
    // After the flush: every span that ended is on its way.
    const denial = await this.client.decide(session, agent, actionOf(call), () => this.spans?.last(session));
    if (denial === undefined) return null;
    return new ToolMessage({ tool_call_id: call.id ?? '', name: call.name, status: 'error', content: denial });
  }
}

/**
 * GuardedToolNode is a ToolNode that asks the guard before running each
 * call. A denied call's tool is never invoked, so LangChain starts no run for
 * it and OpenInference records no TOOL span: the collector sees no event.
 * The conversation is the thread_id of the run's config.
 */
export class GuardedToolNode extends ToolNode {
  /** @param {object[]} tools @param {{guard: Agentguard, agent: string} & object} options the agent's name, and ToolNode's */
  constructor(tools, { guard, agent, ...options }) {
    super(tools, options);
    this.guard = guard;
    this.agent = agent;
  }

  async runTool(call, config, state) {
    const session = config.configurable?.thread_id;
    if (session === undefined) throw new Error('agentguard: the run has no thread_id: the guard has no conversation to ask about');
    const denied = await this.guard.denial(String(session), this.agent, call);
    return denied ?? super.runTool(call, config, state);
  }
}
