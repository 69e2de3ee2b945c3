// The guard hook: LangGraph's post-model hook, which runs after the model has
// chosen a tool call and before the tool node runs it. It flushes the span
// processors (so the collector has every tool call made so far), asks
// agentguard's risk endpoint for the episode's latest probguard decision,
// and on a warning acts as its mode says:
//   observe  records the answer, never acts (the "no monitor" runs);
//   stop     replaces the model's tool call with a final answer: the episode ends;
//   reflect  answers the call with the alert instead of running it, so that
//            the alert is in the model's context at its next turn.
// In deny mode it asks instead about the call itself, before it runs
// (denyHook, below): POST .../decisions, and a denied call is not run.
import { AIMessage, ToolMessage, isAIMessage } from '@langchain/core/messages';
import { ALERT_PREFIX, DENIED_PREFIX } from './policy.js';

export const MODES = ['observe', 'stop', 'reflect', 'deny'];

/**
 * RiskClient asks the endpoint for a group's latest decision. The decision
 * for the last tool call may still be on its way (the span crossing the
 * wire, the processor scoring it): ask polls until the decision's event
 * number reaches the tool calls made, or the deadline passes.
 */
export class RiskClient {
  constructor({ urlTemplate, deadlineMs, pollMs = 5 }) {
    this.urlTemplate = urlTemplate;
    this.deadlineMs = deadlineMs;
    this.pollMs = pollMs;
  }

  async once(group) {
    const res = await fetch(this.urlTemplate.replace('{group}', encodeURIComponent(group)));
    if (res.status === 404) {
      await res.body?.cancel();
      return null;
    }
    if (!res.ok) throw new Error(`risk endpoint: ${res.status} ${await res.text()}`);
    return res.json();
  }

  /** ask resolves to {decision, waitedMs, late}: decision is null when the group is unknown. */
  async ask(group, events) {
    const start = performance.now();
    for (;;) {
      const decision = await this.once(group);
      const waitedMs = performance.now() - start;
      const have = decision ? decision.event : 0;
      if (have >= events) return { decision, waitedMs, late: false };
      if (waitedMs > this.deadlineMs) return { decision, waitedMs, late: true };
      await new Promise((resolve) => setTimeout(resolve, this.pollMs));
    }
  }
}

/**
 * guardHook makes the post-model hook of one episode. ep.calls holds the
 * tool calls made so far; every question and answer goes to ep.asks.
 */
export function guardHook({ mode, client, flush, ep, ...deny }) {
  if (mode === 'deny') return denyHook({ client, flush, ep, ...deny });
  let reflectedOn = 0; // the event of the last decision reflected on: once a decision
  return async (state) => {
    const ai = state.messages[state.messages.length - 1];
    if (!isAIMessage(ai) || !ai.tool_calls?.length) return {};
    await flush();
    const asked = Date.now();
    const { decision, waitedMs, late } = await client.ask(ep.id, ep.calls.length);
    const warning = Boolean(decision?.warning);
    ep.asks.push({
      before_call: ep.calls.length + 1,
      tool: ai.tool_calls[0].name,
      at_ms: asked,
      answered_ms: Date.now(),
      waited_ms: Math.round(waitedMs),
      late,
      event: decision?.event ?? 0,
      p_safe: decision?.p_safe ?? null,
      warning,
    });
    if (!warning || mode === 'observe') return {};
    if (mode === 'stop') {
      ep.stopped = true;
      return { messages: [new AIMessage({ id: ai.id, content: `Stopped by agentguard: ${decision.explanation ?? ''}` })] };
    }
    if (decision.event <= reflectedOn) return {};
    reflectedOn = decision.event;
    ep.reflections++;
    const alert = {
      p_safe: decision.p_safe,
      threshold: decision.threshold,
      state: decision.state,
      rule: decision.rule,
      explanation: decision.explanation,
    };
    return {
      messages: ai.tool_calls.map(
        (c) => new ToolMessage({ tool_call_id: c.id, name: c.name, content: `${ALERT_PREFIX} ${JSON.stringify(alert)} (the call was not run)` }),
      ),
    };
  };
}

/**
 * DecisionClient asks the risk endpoint's decisions endpoint,
 * POST {risk-url}/decisions, what a proposed call would mean. It throws when
 * no answer comes: unreachable, timed out, an error status, no decision.
 */
export class DecisionClient {
  constructor({ urlTemplate, timeoutMs }) {
    this.urlTemplate = urlTemplate;
    this.timeoutMs = timeoutMs;
  }

  async decide(group, action, afterSpanId) {
    const url = this.urlTemplate.replace('{group}', encodeURIComponent(group)) + '/decisions';
    const body = { action, ...(afterSpanId ? { after_span_id: afterSpanId } : {}) };
    let res;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new Error(err.name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : `unreachable (${err.cause?.code ?? err.cause?.errors?.[0]?.code ?? err.message})`);
    }
    const text = await res.text();
    if (!res.ok) throw new Error(`answered ${res.status}: ${text.trim()}`);
    const answer = JSON.parse(text);
    if (!['allow', 'warn', 'deny'].includes(answer?.decision)) throw new Error(`answered no decision: ${text.trim()}`);
    return answer;
  }
}

/**
 * denyHook asks before each call whether it may run: it flushes the spans,
 * then asks about the proposed call after the episode's last span that
 * ended (so that the answer covers every call made). On deny the call is
 * not run and the model reads "Denied by agentguard: <explanation>" as its
 * result, and chooses again; on warn or allow it runs. Without an answer it
 * does as onError says (AGENTGUARD_ON_ERROR: allow or deny), and logs which.
 * This agent makes one call a turn: the first call is asked about.
 */
function denyHook({ client, flush, ep, lastSpan, onError, log }) {
  return async (state) => {
    const ai = state.messages[state.messages.length - 1];
    if (!isAIMessage(ai) || !ai.tool_calls?.length) return {};
    const call = ai.tool_calls[0];
    const asked = Date.now();
    const start = performance.now();
    let answer;
    let error = null;
    try {
      await withTimeout(flush(), client.timeoutMs, 'flushing the spans');
      answer = await client.decide(ep.id, actionOf(call, lastHouse(state.messages)), lastSpan(ep.id));
    } catch (err) {
      error = messageOf(err);
      log(`agentguard: no decision for ${call.name} (episode ${ep.id}): ${error}; ${onError === 'deny' ? 'denied' : 'allowed'} (AGENTGUARD_ON_ERROR=${onError})`);
    }
    const decision = answer?.decision ?? onError;
    const reasons = (answer?.reasons ?? []).filter((r) => r.effect === decision);
    ep.asks.push({
      before_call: ep.calls.length + 1,
      tool: call.name,
      at_ms: asked,
      answered_ms: Date.now(),
      waited_ms: Math.round(performance.now() - start),
      late: false,
      event: answer?.event ?? 0,
      p_safe: reasons[0]?.p_safe ?? null,
      warning: decision !== 'allow',
      decision,
      stale: answer?.stale === true,
      error,
    });
    if (decision !== 'deny') return {};
    ep.denials++;
    const why = error ? `no decision could be had (${error})` : reasons.map((r) => r.explanation).join('; ');
    return {
      messages: ai.tool_calls.map((c) => new ToolMessage({ tool_call_id: c.id, name: c.name, content: `${DENIED_PREFIX} ${why}` })),
    };
  };
}

/**
 * messageOf says what went wrong. The SDK's flush rejects with an export
 * result or a list of socket errors, not an Error: those read as their codes.
 */
function messageOf(err) {
  const e = err?.error ?? err;
  if (Array.isArray(e)) return `flushing the spans failed (${e.map((x) => x?.code ?? x?.message ?? String(x)).join(', ')})`;
  return e?.message || e?.code || String(e);
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** lastHouse is the house as the last tool result reported it (null before the first). */
function lastHouse(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!(m instanceof ToolMessage)) continue;
    try {
      const house = JSON.parse(String(m.content));
      if (house && typeof house.room === 'string') return house;
    } catch {
      // an alert or a denial, not a house
    }
  }
  return null;
}

/**
 * actionOf is the decisions endpoint's action for a proposed call. This
 * example's predicates read the house from the tool's result (its
 * output.value), which a call about to run does not have: asked with its
 * name and arguments alone, every call would be scored as if in the first
 * state (P_safe 0.700 or 0.701), and none denied at θ 0.7. So once the agent
 * has seen the house, the hook asks with the span the call will make, with
 * the result it expects: the house as last reported, in the room a go_to
 * goes to (the stove tools' effect is the stove_on latch's, read from the
 * tool's name). Minutes and chores stay as they were: those it cannot know.
 */
function actionOf(call, house) {
  const args = call.args ?? {};
  if (!house) return { tool: call.name, arguments: args };
  const expected = call.name === 'go_to' ? { ...house, room: args.input } : house;
  const message = {
    lc: 1,
    type: 'constructor',
    id: ['langchain_core', 'messages', 'ToolMessage'],
    kwargs: { content: JSON.stringify(expected), tool_call_id: call.id, name: call.name },
  };
  const attr = (key, value) => ({ key, value: { stringValue: value } });
  return {
    span: {
      name: call.name,
      kind: 1,
      attributes: [
        attr('openinference.span.kind', 'TOOL'),
        attr('tool.name', call.name),
        attr('input.value', JSON.stringify(args)),
        attr('output.value', JSON.stringify({ output: message })),
      ],
    },
  };
}
