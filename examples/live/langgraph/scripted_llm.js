// A chat model that plays a script: no network, no randomness. Each agent gets
// its own ScriptedChatModel, all reading one Script, so the script says both
// what the model answers and which agent must be asking: a script that does
// not follow what LangGraph really does (say, an agent the swarm did not
// route to) fails at once.
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, isToolMessage } from '@langchain/core/messages';

/** DENIED starts the ToolMessage a guard gives the model instead of running a call. */
export const DENIED = 'Denied by agentguard';

/**
 * One model reply: the agent that asks, and what it gets back (a tool call
 * or text). A call that a guard may deny can carry ifRan: the replies that
 * follow only when it ran (a hand-off that runs changes which agent asks next).
 */
export class Step {
  /** @param {string} agent @param {{call?: {name: string, args: object}, text?: string}} reply @param {Step[]} [ifRan] */
  constructor(agent, reply, ifRan = []) {
    this.agent = agent;
    this.reply = reply;
    this.ifRan = ifRan;
  }
}

/** The model's replies of one conversation, in the order LangGraph asks for them. */
export class Script {
  /** @param {string} name for errors and tool call IDs @param {Step[][]} turns the replies of each user turn */
  constructor(name, turns) {
    this.name = name;
    this.turns = turns.map((steps) => [...steps]); // ifRan replies are spliced in
    this.turn = -1;
    this.next = 0;
    this.calls = 0; // tool call IDs are unique within the thread's history
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

  /** callId names the next tool call. */
  callId() {
    return `call_${this.name}_${++this.calls}`;
  }

  /** endTurn fails if LangGraph did not ask for every reply of the turn. */
  endTurn() {
    const left = this.turns[this.turn].length - this.next;
    if (left !== 0) {
      throw new Error(`${this.name}, turn ${this.turn + 1}: ${left} scripted replies were never asked for`);
    }
  }
}

/** ScriptedChatModel is one agent's model: it answers with the script's next step. */
export class ScriptedChatModel extends BaseChatModel {
  /** @param {string} agent @param {Script} script */
  constructor(agent, script) {
    super({});
    this.agent = agent;
    this.script = script;
  }

  _llmType() {
    return 'scripted';
  }

  // The script already names the tools: binding them changes nothing.
  bindTools() {
    return this;
  }

  async _generate(messages) {
    const step = this.script.reply(this.agent, deniedLast(messages));
    const { call, text } = step.reply;
    const message = call
      ? new AIMessage({
          content: '',
          tool_calls: [{ name: call.name, args: structuredClone(call.args), id: this.script.callId(), type: 'tool_call' }],
        })
      : new AIMessage({ content: text });
    return { generations: [{ text: text ?? '', message }] };
  }
}

/** deniedLast: the last message answers a call with the guard's denial. */
function deniedLast(messages) {
  const last = messages.at(-1);
  return Boolean(last && isToolMessage(last) && String(last.content).startsWith(DENIED));
}
