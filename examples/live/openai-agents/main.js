// Plays scripted conversations of the weather team through the OpenAI Agents
// SDK for JS, traced by the SDK and OpenInference and exported to a
// collector over OTLP/HTTP and to an OTLP/JSON file (telemetry.js).
//
//   node main.js --endpoint http://127.0.0.1:4318/v1/traces --out DIR [--n 24] [--concurrency 4] [--pause-ms 0]
//                [--kinds strong,self-hello,...] (default: every kind of weather_agents.js)
//
// DIR receives spans.jsonl (the OTLP/JSON requests), exports.jsonl (each
// export to the collector: when it was answered, its outcome, its spans) and
// conversations.jsonl (each conversation to play, written first: its ID,
// which is the session.id on its spans, its kind and the assertion that must
// catch it).
// On stdout, one JSON line a conversation once it is played: its ID and
// kind, the calls that ran ({agent, tool, args}, a hand-off as
// {agent, transfer_to}), whether it completed (every turn as scripted, the
// last ending in the model's final answer), and, with the guard, its
// decisions.
//
// Each user turn is one run (one trace) of the agent that had control when
// the turn before ended, on the conversation so far plus the new message.
//
// With AGENTGUARD_DECISIONS set (the collector's decisions endpoint, e.g.
// http://127.0.0.1:4320) the agentguard guard (guard.js) asks before every
// tool call and hand-off, and keeps a denied one from running; the model is
// told so as the call's result. Without it the app is unguarded.
// Exit status 1 when a script did not match what the SDK did, the collector
// refused an export, or a span that ended was never exported.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Runner, user } from '@openai/agents';
import { setSession } from '@arizeai/openinference-core';
import { context } from '@opentelemetry/api';
import { AgentguardGuard, GuardSpans } from './guard.js';
import { Script } from './scripted_model.js';
import { startTracing } from './telemetry.js';
import { KINDS, USER_TURNS, WEATHER, team } from './weather_agents.js';

const { values: opts } = parseArgs({
  options: {
    endpoint: { type: 'string' },
    out: { type: 'string' },
    n: { type: 'string', default: '24' },
    concurrency: { type: 'string', default: '4' },
    'pause-ms': { type: 'string', default: '0' },
    kinds: { type: 'string', default: Object.keys(KINDS).join(',') },
  },
});
if (!opts.endpoint || !opts.out) {
  console.error('usage: node main.js --endpoint URL --out DIR [--n N] [--concurrency C] [--pause-ms MS] [--kinds K,...]');
  process.exit(2);
}
const kinds = opts.kinds.split(',');
for (const k of kinds) {
  if (!KINDS[k]) {
    console.error(`--kinds: no kind ${JSON.stringify(k)}: ${Object.keys(KINDS).join(', ')}`);
    process.exit(2);
  }
}
const n = positive('--n', opts.n);
const concurrency = positive('--concurrency', opts.concurrency);
const pauseMs = Number(opts['pause-ms']);
if (!Number.isInteger(pauseMs) || pauseMs < 0) {
  console.error(`--pause-ms: ${JSON.stringify(opts['pause-ms'])} is not a whole number of milliseconds`);
  process.exit(2);
}
if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) {
  // The OTLP exporter would send there instead of --endpoint.
  console.error('unset OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the collector is --endpoint');
  process.exit(2);
}
fs.mkdirSync(opts.out, { recursive: true });

function positive(flag, value) {
  const v = Number(value);
  if (!Number.isInteger(v) || v < 1) {
    console.error(`${flag}: ${JSON.stringify(value)} is not a positive integer`);
    process.exit(2);
  }
  return v;
}

// The conversations, kinds interleaved: strong-01, self-hello-01, ...
const todo = [];
for (let i = 1; i <= n; i++) {
  for (const kind of kinds) {
    todo.push({ id: `${kind}-${String(i).padStart(2, '0')}`, kind });
  }
}
fs.writeFileSync(
  path.join(opts.out, 'conversations.jsonl'),
  todo.map((c) => JSON.stringify({ id: c.id, kind: c.kind, expect: KINDS[c.kind].expect }) + '\n').join(''),
);

// The guard, when asked for: its span processor goes on the tracer provider
// and around OpenInference's, its decisions to the conversation's outcome.
const decisions = new Map(); // conversation ID -> the guard's decisions in it
const guardSpans = process.env.AGENTGUARD_DECISIONS ? new GuardSpans() : undefined;
const shutdown = startTracing({
  endpoint: opts.endpoint,
  spansFile: path.join(opts.out, 'spans.jsonl'),
  exportsFile: path.join(opts.out, 'exports.jsonl'),
  spanProcessors: guardSpans ? [guardSpans] : [],
  wrapProcessor: guardSpans ? (p) => guardSpans.wrap(p) : undefined,
});
const guard = guardSpans
  ? new AgentguardGuard({ spans: guardSpans, onDecision: (d) => decisions.get(d.session)?.push(d) })
  : undefined;

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
    // The user's next message comes in a later turn of the event loop, as
    // a request would (after --pause-ms, a user's pause); within a turn the
    // model answers at once, so the batch processors' timers run between
    // turns and tool calls share milliseconds within them.
    await new Promise((resolve) => (pauseMs > 0 ? setTimeout(resolve, pauseMs) : setImmediate(resolve)));
  }
}

let failed = 0;
const queue = [...todo];
const start = performance.now();
// `concurrency` conversations at a time, as a service with several users
// would run them: their spans interleave in the export batches.
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      const outcome = { id: c.id, kind: c.kind, guarded: Boolean(guard), completed: false, final: null, ran: [] };
      decisions.set(c.id, []);
      try {
        await play(c.id, c.kind, outcome);
        outcome.completed = outcome.final !== null;
      } catch (err) {
        failed++;
        outcome.error = String(err.message ?? err);
        console.error(`live app: ${c.id}: ${err.stack ?? err}`);
      }
      if (guard) outcome.decisions = decisions.get(c.id);
      decisions.delete(c.id);
      process.stdout.write(JSON.stringify(outcome) + '\n');
    }
  }),
);
const played = performance.now() - start;
const problems = await shutdown(2000);
console.error(`live app: played ${todo.length} conversations in ${played.toFixed(0)} ms (${concurrency} at a time)`);
for (const p of problems) console.error(`live app: ${p}`);
process.exit(failed > 0 || problems.length > 0 ? 1 : 0);
