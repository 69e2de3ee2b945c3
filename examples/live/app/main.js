// Plays scripted conversations of the weather team (../shared/kinds.js)
// through Google ADK for TypeScript, traced by ADK itself and exported to a
// collector over OTLP/HTTP and to an OTLP/JSON file (telemetry.js). The
// command line, the files and the outcome lines are ../shared/play.js's,
// the same in every app; a conversation's ID is its ADK session ID and so
// its gen_ai.conversation.id.
//
// With AGENTGUARD_DECISIONS set (the collector's decisions endpoint, e.g.
// http://127.0.0.1:4320) the agentguard plugin (guard.js) asks before every
// tool call and transfer, and keeps a denied one from running; the model is
// told so as the tool's result. Without it the app is unguarded.
import path from 'node:path';
import { InMemoryRunner, isFinalResponse } from '@google/adk';
import { KINDS, USER_TURNS } from '../shared/kinds.js';
import { DecisionLog, parseOptions, plan, playAll, userPause } from '../shared/play.js';
import { Script } from '../shared/script.js';
import { AgentguardPlugin, GuardSpans } from './guard.js';
import { startTracing } from './telemetry.js';
import { team } from './weather_agents.js';

const APP = 'weather_agents';
const USER = 'user';

const opts = parseOptions();
const todo = plan(opts);

// The guard, when asked for: its span processor goes on the tracer provider,
// its decisions to the conversation's outcome.
const decisions = process.env.AGENTGUARD_DECISIONS ? new DecisionLog() : undefined;
const guardSpans = decisions ? new GuardSpans() : undefined;
const guard = decisions ? new AgentguardPlugin({ spans: guardSpans, onDecision: decisions.record }) : undefined;

/**
 * play runs one conversation, each user turn to the end of ADK's events,
 * into outcome: the tools that ran, and the final answer.
 */
async function play(id, kind, outcome) {
  const script = new Script(id, KINDS[kind].turns);
  const ran = (agent, tool, args) => outcome.ran.push({ agent, tool, args });
  const transferred = (agent, to) => outcome.ran.push({ agent, transfer_to: to });
  const runner = new InMemoryRunner({ agent: team(script, ran), appName: APP, plugins: guard ? [guard] : [] });
  await runner.sessionService.createSession({ appName: APP, userId: USER, sessionId: id });
  for (const words of USER_TURNS) {
    script.startTurn();
    const newMessage = { role: 'user', parts: [{ text: words }] };
    outcome.final = null;
    for await (const event of runner.runAsync({ userId: USER, sessionId: id, newMessage })) {
      if (event.errorCode || event.errorMessage) {
        throw new Error(`${id}: ADK reported ${event.errorCode}: ${event.errorMessage}`);
      }
      // transfer_to_agent sets this only when it runs.
      if (event.actions?.transferToAgent) transferred(event.author, event.actions.transferToAgent);
      const text = event.content?.parts?.map((p) => p.text ?? '').join('');
      if (isFinalResponse(event) && text) outcome.final = text;
    }
    script.endTurn();
    await userPause(opts.pauseMs);
  }
}

const shutdown = startTracing({
  endpoint: opts.endpoint,
  spansFile: path.join(opts.out, 'spans.jsonl'),
  exportsFile: path.join(opts.out, 'exports.jsonl'),
  spanProcessors: guardSpans ? [guardSpans] : [],
});
await playAll({ todo, concurrency: opts.concurrency, play, decisions, shutdown: () => shutdown(2000) });
