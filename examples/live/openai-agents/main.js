// Plays scripted conversations of the weather team (../shared/kinds.js)
// through the OpenAI Agents SDK for JS, traced by the SDK and OpenInference
// and exported to a collector over OTLP/HTTP and to an OTLP/JSON file
// (telemetry.js). The command line, the files and the outcome lines are
// ../shared/play.js's, the same in every app; a conversation's ID is the
// session.id on its spans.
//
// Each user turn is one run (one trace) of the agent that had control when
// the turn before ended, on the conversation so far plus the new message.
//
// With AGENTGUARD_DECISIONS set (the collector's decisions endpoint, e.g.
// http://127.0.0.1:4320) the agentguard guard (guard.js) asks before every
// tool call and hand-off, and keeps a denied one from running; the model is
// told so as the call's result. Without it the app is unguarded.
import path from 'node:path';
import { Runner, user } from '@openai/agents';
import { setSession } from '@arizeai/openinference-core';
import { context } from '@opentelemetry/api';
import { KINDS, USER_TURNS, WEATHER } from '../shared/kinds.js';
import { DecisionLog, parseOptions, plan, playAll, usage, userPause } from '../shared/play.js';
import { Script } from '../shared/script.js';
import { AgentguardGuard, GuardSpans } from './guard.js';
import { startTracing } from './telemetry.js';
import { team } from './weather_agents.js';

const opts = parseOptions();
if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) {
  // The OTLP exporter would send there instead of --endpoint.
  usage('unset OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the collector is --endpoint');
}
const todo = plan(opts);

// The guard, when asked for: its span processor goes on the tracer provider
// and around OpenInference's, its decisions to the conversation's outcome.
const decisions = process.env.AGENTGUARD_DECISIONS ? new DecisionLog() : undefined;
const guardSpans = decisions ? new GuardSpans() : undefined;
const shutdown = startTracing({
  endpoint: opts.endpoint,
  spansFile: path.join(opts.out, 'spans.jsonl'),
  exportsFile: path.join(opts.out, 'exports.jsonl'),
  spanProcessors: guardSpans ? [guardSpans] : [],
  wrapProcessor: guardSpans ? (p) => guardSpans.wrap(p) : undefined,
});
const guard = decisions ? new AgentguardGuard({ spans: guardSpans, onDecision: decisions.record }) : undefined;

/**
 * play runs one conversation, each user turn a run to its final output,
 * into outcome: the calls that ran, and the final answer.
 */
async function play(id, kind, outcome) {
  const script = new Script(id, KINDS[kind].turns);
  const agents = team(
    script,
    (agent, tool, args) => outcome.ran.push({ agent, tool, args }),
    (agent, to) => outcome.ran.push({ agent, transfer_to: to }),
  );
  guard?.protect(Object.values(agents));
  // groupId links the traces in OpenAI's own dashboard; the collector reads
  // session.id, which OpenInference takes from the OTel context below.
  const runner = new Runner({ workflowName: 'weather_agents', groupId: id, traceIncludeSensitiveData: true });
  let agent = agents[WEATHER];
  let history = [];
  for (const words of USER_TURNS) {
    script.startTurn();
    outcome.final = null;
    const result = await context.with(setSession(context.active(), { sessionId: id }), () =>
      runner.run(agent, [...history, user(words)]),
    );
    script.endTurn();
    agent = result.lastAgent;
    history = result.history;
    if (typeof result.finalOutput === 'string') outcome.final = result.finalOutput;
    await userPause(opts.pauseMs);
  }
}

await playAll({ todo, concurrency: opts.concurrency, play, decisions, shutdown: () => shutdown(2000) });
