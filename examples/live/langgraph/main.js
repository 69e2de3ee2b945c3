// Plays scripted conversations of the weather team as a LangGraph JS swarm
// (weather_agents.js), traced by OpenInference's LangChain instrumentation
// and exported to a collector over OTLP/HTTP and to an OTLP/JSON file
// (telemetry.js). The same CLI and output as examples/live/app (Google ADK).
//
//   node main.js --endpoint http://127.0.0.1:4318/v1/traces --out DIR [--n 24] [--concurrency 4] [--pause-ms 0]
//                [--kinds strong,self-hello,...] (default: every kind of weather_agents.js)
//
// DIR receives spans.jsonl (the OTLP/JSON requests), exports.jsonl (each
// export to the collector: when it was answered, its outcome, its spans) and
// conversations.jsonl (each conversation to play, written first: its ID,
// which is its thread_id and so its session.id, its kind and the assertion
// that must catch it).
// On stdout, one JSON line a conversation once it is played: its ID and
// kind, the calls that ran ({agent, tool, args}, a hand-off as
// {agent, transfer_to}), whether it completed (every turn as scripted, each
// ending in the model's final text), and, with the guard, its decisions.
//
// With AGENTGUARD_DECISIONS set (the collector's decisions endpoint, e.g.
// http://127.0.0.1:4320) every agent's tools node is guard.js's
// GuardedToolNode: it asks before every tool call and hand-off, and keeps a
// denied one from running; the model is told so as the tool's result.
// Without it the app is unguarded.
// Exit status 1 when a script did not match what LangGraph did, the
// collector refused an export, or a span that ended was never exported.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { awaitAllCallbacks } from '@langchain/core/callbacks/promises';
import { HumanMessage, isAIMessage } from '@langchain/core/messages';
import { Agentguard, GuardSpans, GuardedToolNode } from './guard.js';
import { Script } from './scripted_llm.js';
import { startTracing } from './telemetry.js';
import { KINDS, USER_TURNS, team } from './weather_agents.js';

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

// The guard, when asked for: its span processor goes on the tracer provider,
// its decisions to the conversation's outcome.
const decisions = new Map(); // conversation ID -> the guard's decisions in it
const guardSpans = process.env.AGENTGUARD_DECISIONS ? new GuardSpans() : undefined;
const tracing = startTracing({
  endpoint: opts.endpoint,
  spansFile: path.join(opts.out, 'spans.jsonl'),
  exportsFile: path.join(opts.out, 'exports.jsonl'),
  spanProcessors: guardSpans ? [guardSpans] : [],
});
const guard = guardSpans
  ? new Agentguard({ spans: guardSpans, flush: tracing.flush, onDecision: (d) => decisions.get(d.session)?.push(d) })
  : undefined;
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
        outcome.completed = true;
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
await awaitAllCallbacks();
const played = performance.now() - start;
const problems = await tracing.shutdown(2000);
console.error(`live app: played ${todo.length} conversations in ${played.toFixed(0)} ms (${concurrency} at a time)`);
for (const p of problems) console.error(`live app: ${p}`);
process.exit(failed > 0 || problems.length > 0 ? 1 : 0);
