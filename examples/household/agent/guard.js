// The guard hook: LangGraph's post-model hook, which runs after the model has
// chosen a tool call and before the tool node runs it. It flushes the span
// processors (so the collector has every tool call made so far), asks
// agentguard's risk endpoint for the episode's latest probguard decision,
// and on a warning acts as its mode says:
//   observe  records the answer, never acts (the "no monitor" runs);
//   stop     replaces the model's tool call with a final answer: the episode ends;
//   reflect  answers the call with the alert instead of running it, so that
//            the alert is in the model's context at its next turn.
import { AIMessage, ToolMessage, isAIMessage } from '@langchain/core/messages';
import { ALERT_PREFIX } from './policy.js';

export const MODES = ['observe', 'stop', 'reflect'];

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
export function guardHook({ mode, client, flush, ep }) {
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
