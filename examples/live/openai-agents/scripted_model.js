// A model that plays a script: no network, no randomness. Each agent gets its
// own ScriptedModel (the SDK's Model interface), all reading one Script, so
// the script says both what the model answers and which agent must be
// asking: a script that does not follow what the SDK really does (say, an
// agent the SDK did not run) fails at once.
import { Usage, withGenerationSpan } from '@openai/agents';

/** DENIED starts the result a guard gives the model instead of running a call. */
export const DENIED = 'Denied by agentguard';

/**
 * One model reply: the agent that asks, and what it gets back, a call
 * ({call, args}) or a text ({text}). A call that a guard may deny can carry
 * ifRan: the replies that follow only when it ran (a hand-off that runs
 * changes which agent asks next).
 */
export class Step {
  /** @param {string} agent @param {{call: string, args?: object} | {text: string}} reply @param {Step[]} [ifRan] */
  constructor(agent, reply, ifRan = []) {
    this.agent = agent;
    this.reply = reply;
    this.ifRan = ifRan;
  }
}

/** The model's replies of one conversation, in the order the SDK asks for them. */
export class Script {
  /** @param {string} name for errors @param {Step[][]} turns the replies of each user turn */
  constructor(name, turns) {
    this.name = name;
    this.turns = turns.map((steps) => [...steps]); // ifRan replies are spliced in
    this.turn = -1;
    this.next = 0;
    this.pending = null; // the last reply, while its ifRan replies wait on whether it ran
    this.calls = 0; // for call IDs
  }

  /** startTurn begins the next user turn's replies. */
  startTurn() {
    this.turn++;
    this.next = 0;
  }

  /**
   * reply is the next step of the turn, which `agent` must be the one to ask
   * for; denied says whether the guard denied the call of the reply before.
   */
  reply(agent, denied = false) {
    const steps = this.turns[this.turn];
    if (this.pending && !denied) steps.splice(this.next, 0, ...this.pending.ifRan);
    this.pending = null;
    const where = `${this.name}, turn ${this.turn + 1}, reply ${this.next + 1}`;
    if (!steps || this.next >= steps.length) {
      throw new Error(`${where}: ${agent} asked the model for more than the script has`);
    }
    const step = steps[this.next++];
    if (step.agent !== agent) {
      throw new Error(`${where}: ${agent} asked the model, the script has ${step.agent} ask`);
    }
    if (step.ifRan.length > 0) this.pending = step;
    return step;
  }

  /** endTurn fails if the SDK did not ask for every reply of the turn. */
  endTurn() {
    const left = this.turns[this.turn].length - this.next;
    if (left !== 0) {
      throw new Error(`${this.name}, turn ${this.turn + 1}: ${left} scripted replies were never asked for`);
    }
  }

  /** item is a step's reply as a Responses API output item, each call with an ID of its own. */
  item(step) {
    const r = step.reply;
    if (r.text !== undefined) {
      return { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: r.text }] };
    }
    return { type: 'function_call', callId: `call_${++this.calls}`, name: r.call, arguments: JSON.stringify(r.args ?? {}), status: 'completed' };
  }
}

/** ScriptedModel is one agent's model: it answers with the script's next step. */
export class ScriptedModel {
  /** @param {string} agent @param {Script} script */
  constructor(agent, script) {
    this.agent = agent;
    this.script = script;
  }

  async getResponse(request) {
    const input = Array.isArray(request.input) ? request.input : [{ role: 'user', content: request.input }];
    const step = this.script.reply(this.agent, deniedLast(input));
    const item = this.script.item(step);
    if (item.type === 'function_call' && !offered(request).has(item.name)) {
      throw new Error(`${this.script.name}: the script has ${this.agent} call ${item.name}, which the SDK does not offer it`);
    }
    // A real model (the SDK's OpenAI models) opens its own generation span;
    // a custom Model must, or the trace has no LLM spans.
    return withGenerationSpan(async (span) => {
      span.spanData.model = 'scripted';
      span.spanData.input = input;
      span.spanData.output = [item];
      return {
        usage: new Usage({ requests: 1, inputTokens: 0, outputTokens: 0, totalTokens: 0 }),
        output: [item],
        responseId: `${this.script.name}-${this.script.calls}`,
      };
    });
  }

  async *getStreamedResponse() {
    throw new Error('the scripted model does not stream');
  }
}

/** offered: the names of the tools and hand-off tools the request offers the model. */
function offered(request) {
  return new Set([...(request.tools ?? []).map((t) => t.name), ...(request.handoffs ?? []).map((h) => h.toolName)]);
}

/** deniedLast: the input ends with a call's result that is the guard's denial. */
function deniedLast(input) {
  const last = input.at(-1);
  if (last?.type !== 'function_call_result') return false;
  const out = last.output;
  const text = typeof out === 'string' ? out : (out?.text ?? '');
  return String(text).startsWith(DENIED);
}
