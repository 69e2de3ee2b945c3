// A chat model that plays a script (../shared/script.js, the steps of
// ../shared/kinds.js): no network, no randomness. Each agent gets its own
// ScriptedChatModel, all reading one Script, which fails at once if
// LangGraph asks in another order than the script says (say, an agent the
// swarm did not route to).
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, isToolMessage } from '@langchain/core/messages';
import { DENIED } from '../shared/decisions.js';

/** ScriptedChatModel is one agent's model: it answers with the script's next step. */
export class ScriptedChatModel extends BaseChatModel {
  /** @param {string} agent @param {import('../shared/script.js').Script} script */
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
    const call = callOf(step);
    const usage = usageOf(step);
    const message = call
      ? new AIMessage({
          content: '',
          tool_calls: [{ ...call, id: `call_${this.script.name}_${this.script.nextCall()}`, type: 'tool_call' }],
          ...usage.message,
        })
      : new AIMessage({ content: step.text, ...usage.message });
    return { generations: [{ text: step.text ?? '', message }], ...usage.result };
  }
}

/**
 * usageOf is the step's token usage as LangChain's chat models report it:
 * the message's usage_metadata, and the result's llmOutput.tokenUsage
 * (OpenInference records the first it finds as llm.token_count.prompt and
 * completion); nothing for a step without usage.
 */
function usageOf(step) {
  if (!step.usage) return {};
  const { input, output } = step.usage;
  return {
    message: { usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output } },
    result: { llmOutput: { tokenUsage: { promptTokens: input, completionTokens: output, totalTokens: input + output } } },
  };
}

/** callOf is a step's tool call (a transfer is the hand-off tool transfer_to_<agent>), or undefined for a text. */
function callOf(step) {
  if (step.transfer !== undefined) return { name: `transfer_to_${step.transfer}`, args: {} };
  if (step.tool !== undefined) return { name: step.tool, args: structuredClone(step.args) };
  return undefined;
}

/** deniedLast: the last message answers a call with the guard's denial. */
function deniedLast(messages) {
  const last = messages.at(-1);
  return Boolean(last && isToolMessage(last) && String(last.content).startsWith(DENIED));
}
