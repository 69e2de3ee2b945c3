// A model that plays a script: no network, no randomness. Each agent gets its
// own ScriptedLlm, all reading one Script, so the script says both what the
// model answers and which agent must be asking: a script that does not follow
// what ADK really does (say, an agent ADK did not run) fails at once.
import { BaseLlm } from '@google/adk';

/** One model reply: the agent that asks, and the part it gets back. */
export class Step {
  /** @param {string} agent @param {object} part a functionCall or text part */
  constructor(agent, part) {
    this.agent = agent;
    this.part = part;
  }
}

/** The model's replies of one conversation, in the order ADK asks for them. */
export class Script {
  /** @param {string} name for errors @param {Step[][]} turns the replies of each user turn */
  constructor(name, turns) {
    this.name = name;
    this.turns = turns;
    this.turn = -1;
    this.next = 0;
  }

  /** startTurn begins the next user turn's replies. */
  startTurn() {
    this.turn++;
    this.next = 0;
  }

  /** reply is the next step of the turn, which `agent` must be the one to ask for. */
  reply(agent) {
    const steps = this.turns[this.turn];
    const where = `${this.name}, turn ${this.turn + 1}, reply ${this.next + 1}`;
    if (!steps || this.next >= steps.length) {
      throw new Error(`${where}: ${agent} asked the model for more than the script has`);
    }
    const step = steps[this.next++];
    if (step.agent !== agent) {
      throw new Error(`${where}: ${agent} asked the model, the script has ${step.agent} ask`);
    }
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

  async *generateContentAsync(_request) {
    const step = this.script.reply(this.agent);
    yield { content: { role: 'model', parts: [structuredClone(step.part)] }, turnComplete: true };
  }

  async connect() {
    throw new Error('the scripted model has no live connection');
  }
}
