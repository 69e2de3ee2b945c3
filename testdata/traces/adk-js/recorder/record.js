// SPDX-License-Identifier: Apache-2.0
//
// Records one conversation of the weather team in Google ADK for TypeScript
// (@google/adk, its own tracing), spans as OTLP/JSON on stdout. A scripted
// model, no network.
//
//   npm ci && node record.js SESSION CITY > ../FILE.json
//
// Turn 1: hello (weather_agent_v2 transfers to greeting_agent, say_hello,
// transfer back); turn 2: the weather in CITY. get_weather serves four cities
// and throws for any other (Atlantis): a failed tool call.
import { BaseLlm, FunctionTool, InMemoryRunner, LlmAgent, maybeSetOtelProviders } from '@google/adk';
import { ExportResultCode } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
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
maybeSetOtelProviders([{ spanProcessors: [new SimpleSpanProcessor(exporter)] }]);

/** Scripted is one agent's model: it answers with its next reply. */
class Scripted extends BaseLlm {
  constructor(agent, replies) {
    super({ model: 'scripted' });
    this.agent = agent;
    this.replies = replies;
  }

  async *generateContentAsync() {
    const r = this.replies[this.agent].shift();
    if (!r) throw new Error(`${this.agent}: the script has no more replies`);
    const part = r.transfer
      ? { functionCall: { name: 'transfer_to_agent', args: { agentName: r.transfer } } }
      : r.tool
        ? { functionCall: { name: r.tool, args: r.args ?? {} } }
        : { text: r.text };
    yield { content: { role: 'model', parts: [part] }, turnComplete: true };
  }

  async connect() {
    throw new Error('the scripted model has no live connection');
  }
}

function team(replies) {
  const getWeather = new FunctionTool({
    name: 'get_weather',
    description: 'Retrieves the current weather report for a city.',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => {
      if (!['London', 'Paris', 'Tokyo', 'New York'].includes(city)) throw new Error(`no weather service for ${city}`);
      return { status: 'success', report: `It is sunny in ${city}, 25 °C.` };
    },
  });
  const sayHello = new FunctionTool({ name: 'say_hello', description: 'Greets the user.', execute: () => 'Hello there!' });
  const greeting = new LlmAgent({
    name: 'greeting_agent',
    description: 'Handles simple greetings and hellos using the say_hello tool.',
    instruction: 'Greet the user with say_hello, then hand back.',
    model: new Scripted('greeting_agent', replies),
    tools: [sayHello],
  });
  return new LlmAgent({
    name: 'weather_agent_v2',
    description: 'The main weather agent.',
    instruction: 'Answer weather questions with get_weather; transfer greetings.',
    model: new Scripted('weather_agent_v2', replies),
    tools: [getWeather],
    subAgents: [greeting],
  });
}

async function conversation(session, city) {
  const replies = {
    weather_agent_v2: [{ text: 'How can I help?' }, { tool: 'get_weather', args: { city } }, { text: `Here is the weather in ${city}.` }],
    greeting_agent: [{ transfer: 'greeting_agent' }],
  };
  // ADK starts each turn in the agent that had control: weather_agent_v2.
  replies.weather_agent_v2.unshift({ transfer: 'greeting_agent' });
  replies.greeting_agent = [{ tool: 'say_hello' }, { transfer: 'weather_agent_v2' }];
  const runner = new InMemoryRunner({ agent: team(replies), appName: 'weather_agents' });
  await runner.sessionService.createSession({ appName: 'weather_agents', userId: 'user', sessionId: session });
  for (const text of ['hello', `weather in ${city}?`]) {
    for await (const event of runner.runAsync({ userId: 'user', sessionId: session, newMessage: { role: 'user', parts: [{ text }] } })) {
      if (event.errorCode || event.errorMessage) console.error(`ADK reported ${event.errorCode}: ${event.errorMessage}`);
    }
  }
}

const [session, city] = process.argv.slice(2);
if (!session || !city) {
  console.error('usage: node record.js SESSION CITY');
  process.exit(2);
}
try {
  await conversation(session, city);
} catch (e) {
  console.error(`the conversation ended with: ${e.message}`);
}
const request = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)));
process.stdout.write(JSON.stringify(request, null, 2) + '\n');
process.exit(0);
