// The paper's three-agent weather team in LangGraph JS, as a swarm
// (@langchain/langgraph-swarm): weather_agent_v2 (get_weather),
// greeting_agent (say_hello) and farewell_agent (say_goodbye), each a
// createReactAgent node of a parent graph. Control moves only through
// hand-off tools named transfer_to_<agent>, which return a Command to the
// parent graph; the swarm's activeAgent, kept by the thread's checkpointer,
// says who answers the user's next turn. The weather agent also has the
// office tools of the meter kinds, read_file and send_email
// (../shared/tools.js).
import { ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Command, MemorySaver, getCurrentTaskInput } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { METADATA_KEY_HANDOFF_DESTINATION, createSwarm } from '@langchain/langgraph-swarm';
import { z } from 'zod';
import { FAREWELL, GREETING, WEATHER } from '../shared/kinds.js';
import { DESCRIPTIONS, readFile, sendEmail } from '../shared/tools.js';
import { ScriptedChatModel } from './scripted_llm.js';

/**
 * handoff is `from`'s tool that hands control to `to`: the swarm's
 * createHandoffTool, plus telling ran() when it runs (a hand-off whose tool
 * ran takes effect: the parent graph goes to `to` and makes it active).
 */
function handoff(from, to, ran) {
  const name = `transfer_to_${to}`;
  const t = tool(
    async (_, config) => {
      ran({ agent: from, transfer_to: to });
      const done = new ToolMessage({ content: `Successfully transferred to ${to}`, name, tool_call_id: config.toolCall.id });
      return new Command({
        goto: to,
        graph: Command.PARENT,
        update: { messages: getCurrentTaskInput().messages.concat(done), activeAgent: to },
      });
    },
    { name, description: `Hand the conversation to ${to}.`, schema: z.object({}) },
  );
  t.metadata = { [METADATA_KEY_HANDOFF_DESTINATION]: to }; // the swarm's graph edges
  return t;
}

/**
 * team builds the swarm, compiled on its own checkpointer, each agent with
 * its own ScriptedChatModel on the script. A team is built per conversation:
 * the models hold the conversation's script. ran(entry) is told of each tool
 * and hand-off that runs. toolsNode(agent, tools) makes an agent's tools node
 * (a guard's ToolNode); by default the tools themselves.
 */
export function team(script, ran = () => {}, toolsNode = (_, tools) => tools) {
  const getWeather = tool(
    ({ city }) => {
      ran({ agent: WEATHER, tool: 'get_weather', args: { city } });
      return JSON.stringify({ status: 'success', report: `It is sunny in ${city}, 25 °C.` });
    },
    {
      name: 'get_weather',
      description: 'Retrieves the current weather report for a city.',
      schema: z.object({ city: z.string().describe('the city') }),
    },
  );
  const readFileTool = tool(
    ({ path }) => {
      ran({ agent: WEATHER, tool: 'read_file', args: { path } });
      return readFile(path);
    },
    { name: 'read_file', description: DESCRIPTIONS.read_file, schema: z.object({ path: z.string().describe('the file, relative to the project') }) },
  );
  const sendEmailTool = tool(
    (email) => {
      ran({ agent: WEATHER, tool: 'send_email', args: email });
      return sendEmail(email);
    },
    { name: 'send_email', description: DESCRIPTIONS.send_email, schema: z.object({ to: z.string(), subject: z.string(), body: z.string() }) },
  );
  const sayHello = tool(
    () => {
      ran({ agent: GREETING, tool: 'say_hello', args: {} });
      return 'Hello there!';
    },
    { name: 'say_hello', description: 'Greets the user.', schema: z.object({}) },
  );
  const sayGoodbye = tool(
    () => {
      ran({ agent: FAREWELL, tool: 'say_goodbye', args: {} });
      return 'Goodbye, have a nice day!';
    },
    { name: 'say_goodbye', description: 'Says goodbye to the user.', schema: z.object({}) },
  );
  // Each helper can hand back to the weather agent, and, as the paper's
  // faulty runs do, to itself.
  const agent = (name, prompt, tools) =>
    createReactAgent({ name, prompt, llm: new ScriptedChatModel(name, script), tools: toolsNode(name, tools) });
  const agents = [
    agent(WEATHER, 'Answer weather questions with get_weather; hand greetings and farewells on.', [
      getWeather,
      readFileTool,
      sendEmailTool,
      handoff(WEATHER, GREETING, ran),
      handoff(WEATHER, FAREWELL, ran),
    ]),
    agent(GREETING, 'You are the greeting agent. Greet the user with say_hello, then hand back.', [
      sayHello,
      handoff(GREETING, WEATHER, ran),
      handoff(GREETING, GREETING, ran),
    ]),
    agent(FAREWELL, 'You are the farewell agent. Say goodbye with say_goodbye, then hand back.', [
      sayGoodbye,
      handoff(FAREWELL, WEATHER, ran),
      handoff(FAREWELL, FAREWELL, ran),
    ]),
  ];
  return createSwarm({ agents, defaultActiveAgent: WEATHER }).compile({ checkpointer: new MemorySaver() });
}
