// A model that plays a script: no network, no randomness. Each agent gets its
// own ScriptedLlm, all reading one Script, so the script says both what the
// model answers and which agent must be asking: a script that does not follow
// what ADK really does (say, an agent ADK did not run) fails at once.
import { BaseLlm } from '@google/adk';

/** DENIED starts the result a guard gives the model instead of running a call. */
export const DENIED = 'Denied by agentguard';

/**
 * One model reply: the agent that asks, and the part it gets back. A call
 * that a guard may deny can carry ifRan: the replies that follow only when
 * it ran (a transfer that runs changes which agent asks next).
 */
export class Step {
  /** @param {string} agent @param {object} part a functionCall or text part @param {Step[]} [ifRan] */
  constructor(agent, part, ifRan = []) {
    this.agent = agent;
    this.part = part;
    this.ifRan = ifRan;
  }
}

/** The model's replies of one conversation, in the order ADK asks for them. */
export class Script {
  /** @param {string} name for errors @param {Step[][]} turns the replies of each user turn */
  constructor(name, turns) {
    this.name = name;
    this.turns = turns.map((steps) => [...steps]); // ifRan replies are spliced in
    this.turn = -1;
    this.next = 0;
    this.pending = null; // the last reply, while its ifRan replies wait on whether it ran
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

  /** endTurn fails if ADK did not ask for every reply of the turn. */
  endTurn() {
    const left = this.turns[this.turn].length - this.next;
    if (left !== 0) {
      throw new Error(`${this.name}, turn ${this.turn + 1}: ${left} scripted replies were never asked for`);
    }
  }
}

/** ScriptedLlm is one agent's model: it answers with the script's next step. */
export class ScriptedLlm extends BaseLlm {
  /** @param {string} agent @param {Script} script */
  constructor(agent, script) {
    super({ model: 'scripted' });
    this.agent = agent;
    this.script = script;
  }

  async *generateContentAsync(request) {
    const step = this.script.reply(this.agent, deniedLast(request));
    yield { content: { role: 'model', parts: [structuredClone(step.part)] }, turnComplete: true };
  }

  async connect() {
    throw new Error('the scripted model has no live connection');
  }
}

/** deniedLast: the request's last content answers a call with the guard's denial. */
function deniedLast(request) {
  const parts = request?.contents?.at(-1)?.parts ?? [];
  return parts.some((p) => String(p.functionResponse?.response?.error ?? '').startsWith(DENIED));
}
