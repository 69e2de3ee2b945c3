// SPDX-License-Identifier: Apache-2.0
//
// Records one conversation of a LangGraph JS swarm traced by Traceloop
// (OpenLLMetry): the Traceloop SDK with its LangChain instrumentation, spans
// as OTLP/JSON on stdout. A scripted model, no network: the SDK is told to
// send nothing anywhere but to the in-memory exporter below.
//
//   npm ci && node record.js THREAD CITY > ../FILE.json
//
// Turn 1: hello (weather_agent_v2 transfers to greeting_agent, say_hello,
// transfer back); turn 2: the weather in CITY. get_weather serves four cities
// and throws for any other (Atlantis): a failed tool call.
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Command, MemorySaver, getCurrentTaskInput } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { METADATA_KEY_HANDOFF_DESTINATION, createSwarm } from '@langchain/langgraph-swarm';
import { ExportResultCode } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import * as traceloop from '@traceloop/node-server-sdk';
import { z } from 'zod';

const spans = [];
const exporter = {
  export(batch, done) {
    spans.push(...batch);
    done({ code: ExportResultCode.SUCCESS });
  },
  shutdown: () => Promise.resolve(),
  forceFlush: () => Promise.resolve(),
};
// Callbacks run inline, so that every span has ended when invoke returns.
process.env.LANGCHAIN_CALLBACKS_BACKGROUND = 'false';
traceloop.initialize({
  appName: 'weather-agents-langgraph-traceloop',
  exporter,
  disableBatch: true,
  silenceInitializationMessage: true,
  // No Traceloop cloud: no prompt sync, and no URL of theirs to send to.
  traceloopSyncEnabled: false,
  baseUrl: 'http://127.0.0.1:9',
  instrumentModules: { langchain: { callbackManagerModule: CallbackManagerModule } },
});

let calls = 0;

/** Scripted is one agent's model: it answers with its next reply. */
class Scripted extends BaseChatModel {
  constructor(agent, replies) {
    super({});
    this.agent = agent;
    this.replies = replies;
  }

  _llmType() {
    return 'scripted';
  }

  bindTools() {
    return this;
  }

  async _generate() {
    const r = this.replies[this.agent].shift();
    if (!r) throw new Error(`${this.agent}: the script has no more replies`);
    const message = r.tool
      ? new AIMessage({ content: '', tool_calls: [{ name: r.tool, args: r.args ?? {}, id: `call_${++calls}`, type: 'tool_call' }] })
      : new AIMessage({ content: r.text });
    return { generations: [{ text: r.text ?? '', message }] };
  }
}

/** handoff is the swarm's hand-off tool to `to`. */
function handoff(to) {
  const name = `transfer_to_${to}`;
  const t = tool(
    async (_, config) => {
      const done = new ToolMessage({ content: `Successfully transferred to ${to}`, name, tool_call_id: config.toolCall.id });
      return new Command({
        goto: to,
        graph: Command.PARENT,
        update: { messages: getCurrentTaskInput().messages.concat(done), activeAgent: to },
      });
    },
    { name, description: `Hand the conversation to ${to}.`, schema: z.object({}) },
  );
  t.metadata = { [METADATA_KEY_HANDOFF_DESTINATION]: to };
  return t;
}

const getWeather = tool(
  ({ city }) => {
    if (!['London', 'Paris', 'Tokyo', 'New York'].includes(city)) throw new Error(`no weather service for ${city}`);
    return JSON.stringify({ status: 'success', report: `It is sunny in ${city}, 25 °C.` });
  },
  {
    name: 'get_weather',
    description: 'Retrieves the current weather report for a city.',
    schema: z.object({ city: z.string() }),
  },
);
const sayHello = tool(() => 'Hello there!', { name: 'say_hello', description: 'Greets the user.', schema: z.object({}) });

function team(replies) {
  const agent = (name, tools) => createReactAgent({ name, llm: new Scripted(name, replies), tools });
  return createSwarm({
    agents: [
      agent('weather_agent_v2', [getWeather, handoff('greeting_agent')]),
      agent('greeting_agent', [sayHello, handoff('weather_agent_v2')]),
    ],
    defaultActiveAgent: 'weather_agent_v2',
  }).compile({ checkpointer: new MemorySaver() });
}

async function conversation(thread, city) {
  const replies = {
    weather_agent_v2: [
      { tool: 'transfer_to_greeting_agent' },
      { text: 'How can I help?' },
      { tool: 'get_weather', args: { city } },
      { text: `Here is the weather in ${city}.` },
    ],
    greeting_agent: [{ tool: 'say_hello' }, { tool: 'transfer_to_weather_agent_v2' }],
  };
  const app = team(replies);
  const config = { configurable: { thread_id: thread } };
  // Each user turn a Traceloop workflow, the thread ID its session_id
  // association property (on every span): one trace per turn.
  for (const text of ['hello', `weather in ${city}?`]) {
    await traceloop.withWorkflow({ name: 'weather_team', associationProperties: { session_id: thread } }, () =>
      app.invoke({ messages: [{ role: 'user', content: text }] }, config),
    );
  }
}

const [thread, city] = process.argv.slice(2);
if (!thread || !city) {
  console.error('usage: node record.js THREAD CITY');
  process.exit(2);
}
await conversation(thread, city);
await traceloop.forceFlush();
const request = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)));
process.stdout.write(JSON.stringify(request, null, 2) + '\n');
process.exit(0);
