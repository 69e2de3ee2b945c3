// A model that plays a script (../shared/script.js, the steps of
// ../shared/kinds.js): no network, no randomness. Each agent gets its own
// ScriptedLlm, all reading one Script, which fails at once if ADK asks in
// another order than the script says.
import { BaseLlm } from '@google/adk';
import { DENIED } from '../shared/decisions.js';

/** The tool through which ADK agents hand control to another agent. */
const TRANSFER_TOOL = 'transfer_to_agent';

/** ScriptedLlm is one agent's model: it answers with the script's next step. */
export class ScriptedLlm extends BaseLlm {
  /** @param {string} agent @param {import('../shared/script.js').Script} script */
  constructor(agent, script) {
    super({ model: 'scripted' });
    this.agent = agent;
    this.script = script;
  }

  async *generateContentAsync(request) {
    const step = this.script.reply(this.agent, deniedLast(request));
    yield { content: { role: 'model', parts: [partOf(step)] }, turnComplete: true, ...usageOf(step) };
  }

  async connect() {
    throw new Error('the scripted model has no live connection');
  }
}

/** partOf is a step as the part of ADK's content the model returns. */
function partOf(step) {
  if (step.transfer !== undefined) return { functionCall: { name: TRANSFER_TOOL, args: { agentName: step.transfer } } };
  if (step.tool !== undefined) return { functionCall: { name: step.tool, args: structuredClone(step.args) } };
  return { text: step.text };
}

/**
 * usageOf is the step's token usage as Gemini reports it (ADK's
 * usageMetadata: ADK's tracing records it as gen_ai.usage.input_tokens and
 * output_tokens); nothing for a step without usage.
 */
function usageOf(step) {
  if (!step.usage) return {};
  const { input, output } = step.usage;
  return { usageMetadata: { promptTokenCount: input, candidatesTokenCount: output, totalTokenCount: input + output } };
}

/** deniedLast: the request's last content answers a call with the guard's denial. */
function deniedLast(request) {
  const parts = request?.contents?.at(-1)?.parts ?? [];
  return parts.some((p) => String(p.functionResponse?.response?.error ?? '').startsWith(DENIED));
}
