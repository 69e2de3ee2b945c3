// The paper's three-agent weather team in the OpenAI Agents SDK: weather_agent_v2
// with get_weather, greeting_agent (say_hello) and farewell_agent
// (say_goodbye). Control moves between them only through the SDK's
// hand-offs, which the model sees as tools named transfer_to_<agent>: the
// weather agent hands off to either sub-agent, each sub-agent back to the
// weather agent or to itself (the mistake the paper's failing run makes).
import { Agent, handoff, tool } from '@openai/agents';
import { z } from 'zod';
import { ScriptedModel, Step } from './scripted_model.js';

export const WEATHER = 'weather_agent_v2';
export const GREETING = 'greeting_agent';
export const FAREWELL = 'farewell_agent';

/**
 * team builds the three agents, each with its own ScriptedModel on the
 * script, and returns them by name. A team is built per conversation: the
 * models hold the conversation's script. ran(agent, tool, args) is told of
 * each tool that runs, transferred(agent, to) of each hand-off that takes
 * effect (the SDK calls onHandoff only then).
 */
export function team(script, ran = () => {}, transferred = () => {}) {
  const getWeather = tool({
    name: 'get_weather',
    description: 'Retrieves the current weather report for a city.',
    parameters: z.object({ city: z.string().describe('the city') }),
    execute: ({ city }) => {
      ran(WEATHER, 'get_weather', { city });
      return JSON.stringify({ status: 'success', report: `It is sunny in ${city}, 25 °C.` });
    },
  });
  const sayHello = tool({
    name: 'say_hello',
    description: 'Greets the user.',
    parameters: z.object({}),
    execute: () => {
      ran(GREETING, 'say_hello', {});
      return 'Hello there!';
    },
  });
  const sayGoodbye = tool({
    name: 'say_goodbye',
    description: 'Says goodbye to the user.',
    parameters: z.object({}),
    execute: () => {
      ran(FAREWELL, 'say_goodbye', {});
      return 'Goodbye, have a nice day!';
    },
  });
  const weather = new Agent({
    name: WEATHER,
    instructions: 'Answer weather questions with get_weather; hand greetings and farewells off.',
    handoffDescription: 'The main weather agent: answers weather questions.',
    model: new ScriptedModel(WEATHER, script),
    tools: [getWeather],
  });
  const greeting = new Agent({
    name: GREETING,
    instructions: 'You are the greeting agent. Greet the user with say_hello, then hand back.',
    handoffDescription: 'Handles simple greetings and hellos using the say_hello tool.',
    model: new ScriptedModel(GREETING, script),
    tools: [sayHello],
  });
  const farewell = new Agent({
    name: FAREWELL,
    instructions: 'You are the farewell agent. Say goodbye with say_goodbye, then hand back.',
    handoffDescription: 'Handles simple farewells and goodbyes using the say_goodbye tool.',
    model: new ScriptedModel(FAREWELL, script),
    tools: [sayGoodbye],
  });
  // Set after construction: the agents hand off to each other (and to themselves).
  const to = (from, target) => handoff(target, { onHandoff: () => transferred(from.name, target.name) });
  weather.handoffs = [to(weather, greeting), to(weather, farewell)];
  greeting.handoffs = [to(greeting, weather), to(greeting, greeting)];
  farewell.handoffs = [to(farewell, weather), to(farewell, farewell)];
  return { [WEATHER]: weather, [GREETING]: greeting, [FAREWELL]: farewell };
}

// The model's replies, as steps.
const transfer = (agent, to, ifRan) => new Step(agent, { call: `transfer_to_${to}` }, ifRan);
const call = (agent, tool, args = {}) => new Step(agent, { call: tool, args });
const text = (agent, words) => new Step(agent, { text: words });

/** The user's three turns, the same in every conversation. */
export const USER_TURNS = ['Hi!', 'What is the weather in London?', 'Bye!'];

// The first, middle and last turns of a conversation where every agent hands back.
const helloTurn = [transfer(WEATHER, GREETING), call(GREETING, 'say_hello'), transfer(GREETING, WEATHER), text(WEATHER, 'Hello! Ask me about the weather.')];
const weatherTurn = [call(WEATHER, 'get_weather', { city: 'London' }), text(WEATHER, 'It is sunny in London, 25 °C.')];
const byeTurn = [transfer(WEATHER, FAREWELL), call(FAREWELL, 'say_goodbye'), transfer(FAREWELL, WEATHER), text(WEATHER, 'Goodbye!')];

/**
 * KINDS are the conversations played: how each agent answers each user turn
 * (one list of model replies a turn), whether it is faulty, and the
 * assertion of examples/weather/guard.yaml that must catch it. Each turn
 * starts in the agent that had control when the turn before ended.
 */
export const KINDS = {
  // Every agent hands back after its job: no assertion may fail.
  strong: { expect: null, turns: [helloTurn, weatherTurn, byeTurn] },
  // The paper's failing run: after its hello the greeting agent hands off to
  // itself; the SDK runs it again, it answers, and keeps control into the
  // next turn, where it hands back. If the guard denies the self hand-off,
  // the greeting agent still answers (it has control either way).
  'self-hello': {
    expect: 'te1',
    turns: [
      [transfer(WEATHER, GREETING), call(GREETING, 'say_hello'), transfer(GREETING, GREETING), text(GREETING, 'Hello again!')],
      [transfer(GREETING, WEATHER), call(WEATHER, 'get_weather', { city: 'London' }), text(WEATHER, 'It is sunny in London, 25 °C.')],
      byeTurn,
    ],
  },
  // The same mistake by the farewell agent, in the last turn.
  'self-goodbye': {
    expect: 'te2',
    turns: [
      helloTurn,
      weatherTurn,
      [transfer(WEATHER, FAREWELL), call(FAREWELL, 'say_goodbye'), transfer(FAREWELL, FAREWELL), text(FAREWELL, 'Goodbye again!')],
    ],
  },
  // A second greeting: the weather agent hands off to the greeting agent
  // again when asked about the weather (te6). If the hand-off runs, the
  // greeting agent greets and hands back.
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
  // the SDK gives it every later turn. No single call is wrong (nothing for
  // a pre-call guard to deny); te1 (on_end: fail) catches it only when the
  // conversation ends.
  'keeps-control': {
    expect: 'te1',
    turns: [
      [transfer(WEATHER, GREETING), call(GREETING, 'say_hello'), text(GREETING, 'Hello! How can I help?')],
      [text(GREETING, 'I can only say hello.')],
      [text(GREETING, 'Bye!')],
    ],
  },
};
