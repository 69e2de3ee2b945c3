// A model that plays a script (../shared/script.js, the steps of
// ../shared/kinds.js): no network, no randomness. Each agent gets its own
// ScriptedModel (the SDK's Model interface), all reading one Script, which
// fails at once if the SDK asks in another order than the script says (say,
// an agent the SDK did not run).
import { Usage, withGenerationSpan } from '@openai/agents';
import { DENIED } from '../shared/decisions.js';

/** ScriptedModel is one agent's model: it answers with the script's next step. */
export class ScriptedModel {
  /** @param {string} agent @param {import('../shared/script.js').Script} script */
  constructor(agent, script) {
    this.agent = agent;
    this.script = script;
  }

  async getResponse(request) {
    const input = Array.isArray(request.input) ? request.input : [{ role: 'user', content: request.input }];
    const step = this.script.reply(this.agent, deniedLast(input));
    const item = itemOf(step, this.script);
    if (item.type === 'function_call' && !offered(request).has(item.name)) {
      throw new Error(`${this.script.name}: the script has ${this.agent} call ${item.name}, which the SDK does not offer it`);
    }
    // A real model (the SDK's OpenAI models) opens its own generation span;
    // a custom Model must, or the trace has no LLM spans.
    // The step's token usage, if it has any: on the generation span (the
    // SDK's GenerationUsageData, which OpenInference records as
    // llm.token_count.prompt and completion) and in the response (the run's
    // usage). Without it, none on the span and zeros in the response.
    const { input: inputTokens = 0, output: outputTokens = 0 } = step.usage ?? {};
    return withGenerationSpan(async (span) => {
      span.spanData.model = 'scripted';
      span.spanData.input = input;
      span.spanData.output = [item];
      if (step.usage) span.spanData.usage = { input_tokens: inputTokens, output_tokens: outputTokens };
      return {
        usage: new Usage({ requests: 1, inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }),
        output: [item],
        responseId: `${this.script.name}-${this.script.calls}`,
      };
    });
  }

  async *getStreamedResponse() {
    throw new Error('the scripted model does not stream');
  }
}

/**
 * itemOf is a step as a Responses API output item, each call with an ID of
 * its own; a transfer is the SDK's hand-off tool, transfer_to_<agent>.
 */
function itemOf(step, script) {
  if (step.text !== undefined) {
    return { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: step.text }] };
  }
  const [name, args] = step.transfer !== undefined ? [`transfer_to_${step.transfer}`, {}] : [step.tool, step.args];
  return { type: 'function_call', callId: `call_${script.nextCall()}`, name, arguments: JSON.stringify(args), status: 'completed' };
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
