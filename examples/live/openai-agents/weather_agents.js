// The paper's three-agent weather team in the OpenAI Agents SDK: weather_agent_v2
// with get_weather, greeting_agent (say_hello) and farewell_agent
// (say_goodbye). Control moves between them only through the SDK's
// hand-offs, which the model sees as tools named transfer_to_<agent>: the
// weather agent hands off to either sub-agent, each sub-agent back to the
// weather agent or to itself (the mistake the paper's failing run makes).
// The weather agent also has the office tools of the meter kinds, read_file
// and send_email (../shared/tools.js).
import { Agent, handoff, tool } from '@openai/agents';
import { z } from 'zod';
import { FAREWELL, GREETING, WEATHER } from '../shared/kinds.js';
import { DESCRIPTIONS, readFile, sendEmail } from '../shared/tools.js';
import { ScriptedModel } from './scripted_model.js';

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
  const readFileTool = tool({
    name: 'read_file',
    description: DESCRIPTIONS.read_file,
    parameters: z.object({ path: z.string().describe('the file, relative to the project') }),
    execute: ({ path }) => {
      ran(WEATHER, 'read_file', { path });
      return readFile(path);
    },
  });
  const sendEmailTool = tool({
    name: 'send_email',
    description: DESCRIPTIONS.send_email,
    parameters: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
    execute: (email) => {
      ran(WEATHER, 'send_email', email);
      return sendEmail(email);
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
    tools: [getWeather, readFileTool, sendEmailTool],
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
