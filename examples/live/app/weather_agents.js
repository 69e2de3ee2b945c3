// The paper's three-agent weather team in Google ADK for TypeScript: a root
// weather agent with get_weather and two sub-agents, greeting_agent
// (say_hello) and farewell_agent (say_goodbye). Control moves between them
// only through ADK's own transfer_to_agent tool, which ADK gives every agent
// that has somewhere to transfer to.
import { FunctionTool, LlmAgent } from '@google/adk';
import { z } from 'zod';
import { ScriptedLlm, Step } from './scripted_llm.js';

export const WEATHER = 'weather_agent_v2';
export const GREETING = 'greeting_agent';
export const FAREWELL = 'farewell_agent';

/**
 * team builds the three agents, each with its own ScriptedLlm on the script.
 * A team is built per conversation: the models hold the conversation's script.
 * ran(agent, tool, args) is told of each of their tools that runs.
 */
export function team(script, ran = () => {}) {
  const getWeather = new FunctionTool({
    name: 'get_weather',
    description: 'Retrieves the current weather report for a city.',
    parameters: z.object({ city: z.string().describe('the city') }),
    execute: ({ city }) => {
      ran(WEATHER, 'get_weather', { city });
      return { status: 'success', report: `It is sunny in ${city}, 25 °C.` };
    },
  });
  const sayHello = new FunctionTool({
    name: 'say_hello',
    description: 'Greets the user.',
    execute: () => {
      ran(GREETING, 'say_hello', {});
      return 'Hello there!';
    },
  });
  const sayGoodbye = new FunctionTool({
    name: 'say_goodbye',
    description: 'Says goodbye to the user.',
    execute: () => {
      ran(FAREWELL, 'say_goodbye', {});
      return 'Goodbye, have a nice day!';
    },
  });
  const greeting = new LlmAgent({
    name: GREETING,
    description: 'Handles simple greetings and hellos using the say_hello tool.',
    instruction: 'You are the greeting agent. Greet the user with say_hello, then hand back.',
    model: new ScriptedLlm(GREETING, script),
    tools: [sayHello],
  });
  const farewell = new LlmAgent({
    name: FAREWELL,
    description: 'Handles simple farewells and goodbyes using the say_goodbye tool.',
    instruction: 'You are the farewell agent. Say goodbye with say_goodbye, then hand back.',
    model: new ScriptedLlm(FAREWELL, script),
    tools: [sayGoodbye],
  });
  return new LlmAgent({
    name: WEATHER,
    description: 'The main weather agent: answers weather questions, delegates greetings and farewells.',
    instruction: 'Answer weather questions with get_weather; transfer greetings and farewells.',
    model: new ScriptedLlm(WEATHER, script),
    tools: [getWeather],
    subAgents: [greeting, farewell],
  });
}

// The model's replies, as steps.
const transfer = (agent, to, ifRan) => new Step(agent, { functionCall: { name: 'transfer_to_agent', args: { agentName: to } } }, ifRan);
const call = (agent, tool, args = {}) => new Step(agent, { functionCall: { name: tool, args } });
const text = (agent, words) => new Step(agent, { text: words });

/** The user's three turns, the same in every conversation. */
export const USER_TURNS = ['Hi!', 'What is the weather in London?', 'Bye!'];

// The first and last turns of a conversation where every agent hands back.
const helloTurn = [transfer(WEATHER, GREETING), call(GREETING, 'say_hello'), transfer(GREETING, WEATHER), text(WEATHER, 'Hello! Ask me about the weather.')];
const byeTurn = [transfer(WEATHER, FAREWELL), call(FAREWELL, 'say_goodbye'), transfer(FAREWELL, WEATHER), text(WEATHER, 'Goodbye!')];

/**
 * KINDS are the conversations played: how each agent answers each user turn
 * (one list of model replies a turn), whether it is faulty, and the
 * assertion that must catch it: te1..te3 are examples/weather/collector.yaml's
 * (make live plays those four kinds), te4..te6 only guard.yaml's.
 */
export const KINDS = {
  // Every agent hands back after its job: no assertion may fail.
  strong: {
    expect: null,
    turns: [
      [transfer(WEATHER, GREETING), call(GREETING, 'say_hello'), transfer(GREETING, WEATHER), text(WEATHER, 'Hello! Ask me about the weather.')],
      [call(WEATHER, 'get_weather', { city: 'London' }), text(WEATHER, 'It is sunny in London, 25 °C.')],
      [transfer(WEATHER, FAREWELL), call(FAREWELL, 'say_goodbye'), transfer(FAREWELL, WEATHER), text(WEATHER, 'Goodbye!')],
    ],
  },
  // The paper's failing run: after its hello the greeting agent transfers to
  // itself; ADK runs it again and gives it the next turn, where it hands back.
  'self-hello': {
    expect: 'te1',
    turns: [
      [transfer(WEATHER, GREETING), call(GREETING, 'say_hello'), transfer(GREETING, GREETING), text(GREETING, 'Hello again!')],
      [transfer(GREETING, WEATHER), call(WEATHER, 'get_weather', { city: 'London' }), text(WEATHER, 'It is sunny in London, 25 °C.')],
      [transfer(WEATHER, FAREWELL), call(FAREWELL, 'say_goodbye'), transfer(FAREWELL, WEATHER), text(WEATHER, 'Goodbye!')],
    ],
  },
  // The same mistake by the farewell agent, in the last turn.
  'self-goodbye': {
    expect: 'te2',
    turns: [
      [transfer(WEATHER, GREETING), call(GREETING, 'say_hello'), transfer(GREETING, WEATHER), text(WEATHER, 'Hello! Ask me about the weather.')],
      [call(WEATHER, 'get_weather', { city: 'London' }), text(WEATHER, 'It is sunny in London, 25 °C.')],
      [transfer(WEATHER, FAREWELL), call(FAREWELL, 'say_goodbye'), transfer(FAREWELL, FAREWELL), text(FAREWELL, 'Goodbye again!')],
    ],
  },
  // A second greeting: the weather agent transfers to the greeting agent
  // again when asked about the weather (te6 of examples/weather/guard.yaml).
  // If the transfer runs, the greeting agent greets and hands back.
  'extra-transfer': {
    expect: 'te6',
    turns: [
      helloTurn,
      [
        transfer(WEATHER, GREETING, [call(GREETING, 'say_hello'), transfer(GREETING, WEATHER)]),
        call(WEATHER, 'get_weather', { city: 'London' }),
        text(WEATHER, 'It is sunny in London, 25 °C.'),
      ],
      byeTurn,
    ],
  },
  // The weather agent looks up a city it does not serve (te4).
  'bad-city': {
    expect: 'te4',
    turns: [helloTurn, [call(WEATHER, 'get_weather', { city: 'Atlantis' }), text(WEATHER, 'I cannot tell.')], byeTurn],
  },
  // The weather agent looks up the same city twice in a row (te5).
  'repeat-weather': {
    expect: 'te5',
    turns: [
      helloTurn,
      [call(WEATHER, 'get_weather', { city: 'London' }), call(WEATHER, 'get_weather', { city: 'London' }), text(WEATHER, 'It is sunny in London, 25 °C.')],
      byeTurn,
    ],
  },
  // The greeting agent says hello and answers in text, never handing back:
  // ADK gives it every later turn. No single turn is wrong; te1 (on_end:
  // fail) catches it only when the conversation ends.
  'keeps-control': {
    expect: 'te1',
    turns: [
      [transfer(WEATHER, GREETING), call(GREETING, 'say_hello'), text(GREETING, 'Hello! How can I help?')],
      [text(GREETING, 'I can only say hello.')],
      [text(GREETING, 'Bye!')],
    ],
  },
};
