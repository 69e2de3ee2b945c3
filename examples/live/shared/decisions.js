// The client of agentguard's decisions endpoint (the riskendpoint extension,
// POST /v1/groups/{group}/decisions) that every framework's guard.js uses:
// the framework's hook says who is about to do what, this asks and says
// whether it may run. Copy it with the guard.js you use; it needs nothing
// but Node.js 20 (fetch, AbortSignal.timeout).
//
// Before each question it flushes the spans (so that the collector has
// every span that ended), then asks with the call as the action and the last
// span of the conversation that ended as after_span_id (so that the answer
// covers it, even if a timer's export of an earlier turn is still on its
// way).
//   deny         the call must not run; the model is to get
//                "Denied by agentguard: <explanations>" as its result
//   warn, allow  the call runs (a warning is logged)
//   no answer    (unreachable, timeout, an error status) the call runs or not
//                as AGENTGUARD_ON_ERROR says: allow (the default) or deny;
//                the log says which
//
// Environment: AGENTGUARD_DECISIONS, the endpoint's base URL
// (http://127.0.0.1:4320); AGENTGUARD_ON_ERROR, allow or deny;
// AGENTGUARD_TIMEOUT_MS, how long to wait for an answer (1000).

/** DENIED starts every result the model gets for a call the guard denied. */
export const DENIED = 'Denied by agentguard';

export class DecisionsClient {
  /**
   * @param {object} o
   * @param {() => Promise<void>} o.flush flushes the spans (the tracer provider's forceFlush)
   * @param {string} [o.url] the decisions endpoint's base URL (AGENTGUARD_DECISIONS)
   * @param {'allow'|'deny'} [o.onError] what to do without an answer (AGENTGUARD_ON_ERROR, allow)
   * @param {number} [o.timeoutMs] how long to wait for an answer, the flush included (AGENTGUARD_TIMEOUT_MS, 1000)
   * @param {(d: object) => void} [o.onDecision] told of every decision, with the session, agent and action
   * @param {(line: string) => void} [o.log] where the guard says what it did (console.error)
   * @param {string} [o.transferVerb] how the log names a transfer: "transfer to" (default) or "hand-off to"
   * @param {string} [o.noSession] the error when a call has no session to ask about
   */
  constructor({
    flush,
    url = process.env.AGENTGUARD_DECISIONS,
    onError = process.env.AGENTGUARD_ON_ERROR || 'allow',
    timeoutMs = Number(process.env.AGENTGUARD_TIMEOUT_MS || 1000),
    onDecision = () => {},
    log = (line) => console.error(line),
    transferVerb = 'transfer to',
    noSession = 'no session ID',
  } = {}) {
    // Wrong settings fail at start, not at the first call.
    if (!url) throw new Error('agentguard: no decisions endpoint (set AGENTGUARD_DECISIONS, e.g. http://127.0.0.1:4320)');
    if (typeof flush !== 'function') throw new Error("agentguard: flush is required (the tracer provider's forceFlush)");
    if (onError !== 'allow' && onError !== 'deny') {
      throw new Error(`agentguard: AGENTGUARD_ON_ERROR is ${JSON.stringify(onError)}: allow or deny`);
    }
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new Error(`agentguard: AGENTGUARD_TIMEOUT_MS is ${JSON.stringify(timeoutMs)}: a positive number of milliseconds`);
    }
    this.base = url.replace(/\/+$/, '');
    Object.assign(this, { flush, onError, timeoutMs, onDecision, log, transferVerb, noSession });
  }

  /**
   * decide asks whether `agent` may take `action` ({tool, arguments} or
   * {transfer_to}) in conversation `session`, and resolves to the denial the
   * model is to get instead of the call's result, or to undefined when the
   * call may run. after is the span to ask after (see ask).
   */
  async decide(session, agent, action, after) {
    const what = this.describe(session, agent, action);
    let answer;
    try {
      answer = await this.ask(session, action, after);
    } catch (err) {
      const decision = this.onError;
      this.log(`agentguard: no decision for ${what}: ${err.message}; ${decision === 'deny' ? 'denied' : 'allowed'} (AGENTGUARD_ON_ERROR=${decision})`);
      this.onDecision({ session, agent, action, decision, error: err.message });
      return decision === 'deny' ? `${DENIED}: no decision could be had (${err.message})` : undefined;
    }
    // Only the reasons for the decision given: a deny's explanations, not the warnings beside it.
    const reasons = (answer.reasons ?? []).filter((r) => r.effect === answer.decision).map((r) => r.explanation);
    this.onDecision({ session, agent, action, decision: answer.decision, reasons, stale: answer.stale === true });
    switch (answer.decision) {
      case 'deny':
        this.log(`agentguard: denied ${what}: ${reasons.join('; ')}`);
        return `${DENIED}: ${reasons.join('; ')}`;
      case 'warn':
        this.log(`agentguard: warning on ${what}, running it: ${reasons.join('; ')}`);
        return undefined;
      default: // allow
        return undefined;
    }
  }

  /**
   * ask flushes the spans, then asks the endpoint after the span `after`:
   * its ID, or a function that gives it once the flush is done. It throws
   * when no answer comes: no session, unreachable, timed out, an error
   * status, or no decision.
   */
  async ask(session, action, after) {
    if (session === undefined) throw new Error(this.noSession);
    const signal = AbortSignal.timeout(this.timeoutMs);
    await Promise.race([
      this.flush(),
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error(`flushing the spans took over ${this.timeoutMs} ms`)))),
    ]);
    const afterId = typeof after === 'function' ? after() : after;
    const body = { action, ...(afterId ? { after_span_id: afterId } : {}) };
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

  /** describe names a call in the log: "<agent> <action> (session <session>)". */
  describe(session, agent, action) {
    const call = action.transfer_to !== undefined ? `${this.transferVerb} ${action.transfer_to}` : `${action.tool}(${JSON.stringify(action.arguments)})`;
    return `${agent} ${call} (session ${session})`;
  }
}

/**
 * flushGlobal flushes the global tracer provider of the OpenTelemetry API
 * given (its `trace`): the default flush of a framework that sets the
 * provider up itself. Passed in, so that this file imports no package.
 */
export function flushGlobal(trace) {
  const provider = trace.getTracerProvider();
  const real = typeof provider.getDelegate === 'function' ? provider.getDelegate() : provider;
  return typeof real.forceFlush === 'function' ? real.forceFlush() : Promise.resolve();
}
