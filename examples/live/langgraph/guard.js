// agentguard's pre-call guard for LangGraph JS (traced by OpenInference's
// LangChain instrumentation): a ToolNode that asks the collector's decisions
// endpoint (the riskendpoint extension, POST /v1/groups/{group}/decisions)
// before every tool call and every hand-off (a tool named
// transfer_to_<agent>), and keeps a denied one from running.
//
//   const spans = new GuardSpans();                       // a span processor
//   const provider = new BasicTracerProvider({ spanProcessors: [spans, ...yours] });
//   new LangChainInstrumentation({ tracerProvider: provider }).manuallyInstrument(CallbackManagerModule);
//   process.env.LANGCHAIN_CALLBACKS_BACKGROUND = 'false'; // spans end before the next node runs
//   const guard = new Agentguard({ spans, flush: () => provider.forceFlush() });
//   createReactAgent({ llm, name, tools: new GuardedToolNode(tools, { guard, agent: name }) });
//
// Before each call it flushes the tracer provider (so that the collector has
// every span that ended), then asks with the call as the action and the last
// span of the conversation that ended as after_span_id (so that the answer
// covers it, even if a timer's export of an earlier turn is still on its
// way). The group is the thread_id, which OpenInference sets as session.id on
// every span: the collector must group by session.id.
//   deny         the tool does not run, and no TOOL span is recorded; the
//                model gets a ToolMessage (status error) "Denied by
//                agentguard: <explanations>" as the call's result
//   warn, allow  the tool runs (a warning is logged)
//   no answer    (unreachable, timeout, an error status) the tool runs or not
//                as AGENTGUARD_ON_ERROR says: allow (the default) or deny;
//                the log says which
// With LANGCHAIN_CALLBACKS_BACKGROUND left at its default, spans end in the
// background: the flush may miss the last one, and after_span_id name an
// older one.
//
// Environment: AGENTGUARD_DECISIONS, the endpoint's base URL
// (http://127.0.0.1:4320); AGENTGUARD_ON_ERROR, allow or deny;
// AGENTGUARD_TIMEOUT_MS, how long to wait for an answer (1000).
import { ToolMessage } from '@langchain/core/messages';
import { ToolNode } from '@langchain/langgraph/prebuilt';

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
   * @param {string} [o.url] the decisions endpoint's base URL (AGENTGUARD_DECISIONS)
   * @param {'allow'|'deny'} [o.onError] what to do without an answer (AGENTGUARD_ON_ERROR, allow)
   * @param {number} [o.timeoutMs] how long to wait for an answer (AGENTGUARD_TIMEOUT_MS, 1000)
   * @param {(d: object) => void} [o.onDecision] told of every decision, with the session, agent and action
   * @param {(line: string) => void} [o.log] where the guard says what it did (console.error)
   */
  constructor({
    spans,
    flush,
    url = process.env.AGENTGUARD_DECISIONS,
    onError = process.env.AGENTGUARD_ON_ERROR || 'allow',
    timeoutMs = Number(process.env.AGENTGUARD_TIMEOUT_MS || 1000),
    onDecision = () => {},
    log = (line) => console.error(line),
  } = {}) {
    if (!url) throw new Error('agentguard: no decisions endpoint (set AGENTGUARD_DECISIONS, e.g. http://127.0.0.1:4320)');
    if (typeof flush !== 'function') throw new Error("agentguard: flush is required (the tracer provider's forceFlush)");
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

  /**
   * denial decides on `agent`'s call in conversation `session`: the
   * ToolMessage to answer it with instead of running it, or null to run it.
   */
  async denial(session, agent, call) {
    const action = actionOf(call);
    const what = `${agent} ${describe(action)} (session ${session})`;
    const deny = (why) =>
      new ToolMessage({ tool_call_id: call.id ?? '', name: call.name, status: 'error', content: `Denied by agentguard: ${why}` });
    let answer;
    try {
      answer = await this.ask(session, action);
    } catch (err) {
      const decision = this.onError;
      this.log(`agentguard: no decision for ${what}: ${err.message}; ${decision === 'deny' ? 'denied' : 'allowed'} (AGENTGUARD_ON_ERROR=${decision})`);
      this.onDecision({ session, agent, action, decision, error: err.message });
      return decision === 'deny' ? deny(`no decision could be had (${err.message})`) : null;
    }
    const reasons = (answer.reasons ?? []).filter((r) => r.effect === answer.decision).map((r) => r.explanation);
    this.onDecision({ session, agent, action, decision: answer.decision, reasons, stale: answer.stale === true });
    switch (answer.decision) {
      case 'deny':
        this.log(`agentguard: denied ${what}: ${reasons.join('; ')}`);
        return deny(reasons.join('; '));
      case 'warn':
        this.log(`agentguard: warning on ${what}, running it: ${reasons.join('; ')}`);
        return null;
      default: // allow
        return null;
    }
  }

  /**
   * ask flushes the spans, then asks the endpoint after the last span of the
   * conversation that ended. It throws when no answer comes: unreachable,
   * timed out, an error status, or no decision.
   */
  async ask(session, action) {
    const signal = AbortSignal.timeout(this.timeoutMs);
    await Promise.race([
      this.flush(),
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error(`flushing the spans took over ${this.timeoutMs} ms`)))),
    ]);
    const after = this.spans?.last(session); // after the flush: every span that ended is on its way
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

function describe(action) {
  return action.transfer_to !== undefined ? `transfer to ${action.transfer_to}` : `${action.tool}(${JSON.stringify(action.arguments)})`;
}
