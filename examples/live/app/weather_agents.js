// The paper's three-agent weather team in Google ADK for TypeScript: a root
// weather agent with get_weather and two sub-agents, greeting_agent
// (say_hello) and farewell_agent (say_goodbye). Control moves between them
// only through ADK's own transfer_to_agent tool, which ADK gives every agent
// that has somewhere to transfer to. The weather agent also has the office
// tools of the meter kinds, read_file and send_email (../shared/tools.js).
import { FunctionTool, LlmAgent } from '@google/adk';
import { z } from 'zod';
import { FAREWELL, GREETING, WEATHER } from '../shared/kinds.js';
import { DESCRIPTIONS, readFile, sendEmail } from '../shared/tools.js';
import { ScriptedLlm } from './scripted_llm.js';

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
  const readFileTool = new FunctionTool({
    name: 'read_file',
    description: DESCRIPTIONS.read_file,
    parameters: z.object({ path: z.string().describe('the file, relative to the project') }),
    execute: ({ path }) => {
      ran(WEATHER, 'read_file', { path });
      return readFile(path);
    },
  });
  const sendEmailTool = new FunctionTool({
    name: 'send_email',
    description: DESCRIPTIONS.send_email,
    parameters: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
    execute: (email) => {
      ran(WEATHER, 'send_email', email);
      return sendEmail(email);
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
    tools: [getWeather, readFileTool, sendEmailTool],
    subAgents: [greeting, farewell],
  });
}
