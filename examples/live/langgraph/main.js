// Plays scripted conversations of the weather team (../shared/kinds.js) as a
// LangGraph JS swarm (weather_agents.js), traced by OpenInference's
// LangChain instrumentation and exported to a collector over OTLP/HTTP and
// to an OTLP/JSON file (telemetry.js). The command line, the files and the
// outcome lines are ../shared/play.js's, the same in every app; a
// conversation's ID is its thread_id and so its session.id.
//
// With AGENTGUARD_DECISIONS set (the collector's decisions endpoint, e.g.
// http://127.0.0.1:4320) every agent's tools node is guard.js's
// GuardedToolNode: it asks before every tool call and hand-off, and keeps a
// denied one from running; the model is told so as the tool's result.
// Without it the app is unguarded.
import path from 'node:path';
import { awaitAllCallbacks } from '@langchain/core/callbacks/promises';
import { HumanMessage, isAIMessage } from '@langchain/core/messages';
import { KINDS, USER_TURNS } from '../shared/kinds.js';
import { DecisionLog, parseOptions, plan, playAll, userPause } from '../shared/play.js';
import { Script } from '../shared/script.js';
import { Agentguard, GuardSpans, GuardedToolNode } from './guard.js';
import { startTracing } from './telemetry.js';
import { team } from './weather_agents.js';

const opts = parseOptions();
const todo = plan(opts);

// The guard, when asked for: its span processor goes on the tracer provider,
// its decisions to the conversation's outcome.
const decisions = process.env.AGENTGUARD_DECISIONS ? new DecisionLog() : undefined;
const guardSpans = decisions ? new GuardSpans() : undefined;
const tracing = startTracing({
  endpoint: opts.endpoint,
  spansFile: path.join(opts.out, 'spans.jsonl'),
  exportsFile: path.join(opts.out, 'exports.jsonl'),
  spanProcessors: guardSpans ? [guardSpans] : [],
});
const guard = decisions ? new Agentguard({ spans: guardSpans, flush: tracing.flush, onDecision: decisions.record }) : undefined;
const toolsNode = guard ? (agent, tools) => new GuardedToolNode(tools, { guard, agent }) : undefined;

/**
 * play runs one conversation, each user turn one invocation of the swarm on
 * the conversation's thread, into outcome: the tools and hand-offs that ran,
 * and the final answer.
 */
async function play(id, kind, outcome) {
  const script = new Script(id, KINDS[kind].turns);
  const swarm = team(script, (entry) => outcome.ran.push(entry), toolsNode);
  const config = { configurable: { thread_id: id } };
  for (const words of USER_TURNS) {
    script.startTurn();
    outcome.final = null;
    const state = await swarm.invoke({ messages: [new HumanMessage(words)] }, config);
    // The turn ends in the model's text: an AI message without tool calls.
    const last = state.messages.at(-1);
    if (isAIMessage(last) && !last.tool_calls?.length && typeof last.content === 'string' && last.content) {
      outcome.final = last.content;
    }
    script.endTurn();
    if (outcome.final === null) throw new Error(`${id}: a turn did not end in the model's text`);
    await userPause(opts.pauseMs);
  }
}

// LangChain's callbacks (OpenInference's spans) may still be running once
// the last conversation is played.
await playAll({
  todo,
  concurrency: opts.concurrency,
  play,
  decisions,
  settle: awaitAllCallbacks,
  shutdown: () => tracing.shutdown(2000),
});
