// What the three live apps' main.js share: the command line, the plan of
// conversations, the loop that plays them a few at a time, and the outcome
// lines. The Go harnesses (test/scenarios/live, test/scenarios/guard-live)
// read all of it, so every app keeps the same CLI and output:
//
//   node main.js --endpoint http://127.0.0.1:4318/v1/traces --out DIR [--n 24] [--concurrency 4] [--pause-ms 0]
//                [--kinds strong,self-hello,...] (default: every kind of kinds.js but the meter kinds)
//
// DIR receives conversations.jsonl (each conversation to play, written
// first: its ID, which is the group the collector judges it in, its kind and
// the assertion that must catch it), and, from the app's telemetry.js,
// spans.jsonl and exports.jsonl.
// On stdout, one JSON line a conversation once it is played: its ID and
// kind, the calls that ran ({agent, tool, args}, a transfer as
// {agent, transfer_to}), whether it completed (every turn as scripted, the
// last ending in the model's final answer), and, with the guard, its
// decisions. A framework's own log lines may come between them.
// Exit status 2 on a wrong argument; 1 when a conversation failed (its
// script did not match what the framework did) or the tracing reported a
// problem.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { KINDS } from './kinds.js';

/** parseOptions reads the command line; on a wrong argument it says so and exits 2. */
export function parseOptions() {
  const { values: opts } = parseArgs({
    options: {
      endpoint: { type: 'string' },
      out: { type: 'string' },
      n: { type: 'string', default: '24' },
      concurrency: { type: 'string', default: '4' },
      'pause-ms': { type: 'string', default: '0' },
      kinds: { type: 'string', default: Object.keys(KINDS).filter((k) => !KINDS[k].suite).join(',') },
    },
  });
  if (!opts.endpoint || !opts.out) {
    usage('usage: node main.js --endpoint URL --out DIR [--n N] [--concurrency C] [--pause-ms MS] [--kinds K,...]');
  }
  const kinds = opts.kinds.split(',');
  for (const k of kinds) {
    if (!KINDS[k]) usage(`--kinds: no kind ${JSON.stringify(k)}: ${Object.keys(KINDS).join(', ')}`);
  }
  const n = positive('--n', opts.n);
  const concurrency = positive('--concurrency', opts.concurrency);
  const pauseMs = Number(opts['pause-ms']);
  if (!Number.isInteger(pauseMs) || pauseMs < 0) {
    usage(`--pause-ms: ${JSON.stringify(opts['pause-ms'])} is not a whole number of milliseconds`);
  }
  return { endpoint: opts.endpoint, out: opts.out, n, concurrency, pauseMs, kinds };
}

function positive(flag, value) {
  const v = Number(value);
  if (!Number.isInteger(v) || v < 1) usage(`${flag}: ${JSON.stringify(value)} is not a positive integer`);
  return v;
}

/** usage says what is wrong and exits 2, the status of a wrong argument. */
export function usage(line) {
  console.error(line);
  process.exit(2);
}

/**
 * plan lists the conversations, kinds interleaved (strong-01, self-hello-01,
 * ...), and writes them to DIR/conversations.jsonl before any is played: the
 * harness knows what was meant to run even if the app dies.
 */
export function plan({ out, n, kinds }) {
  fs.mkdirSync(out, { recursive: true });
  const todo = [];
  for (let i = 1; i <= n; i++) {
    for (const kind of kinds) {
      todo.push({ id: `${kind}-${String(i).padStart(2, '0')}`, kind });
    }
  }
  fs.writeFileSync(
    path.join(out, 'conversations.jsonl'),
    todo.map((c) => JSON.stringify({ id: c.id, kind: c.kind, expect: KINDS[c.kind].expect }) + '\n').join(''),
  );
  return todo;
}

/** DecisionLog collects the guard's decisions by conversation, for its outcome line. */
export class DecisionLog {
  constructor() {
    this.byConversation = new Map(); // conversation ID -> the guard's decisions in it
    this.record = (d) => this.byConversation.get(d.session)?.push(d); // the guard's onDecision
  }
}

/**
 * playAll plays the conversations, `concurrency` at a time, as a service
 * with several users would run them (their spans interleave in the export
 * batches), each with play(id, kind, outcome), and prints each one's outcome
 * line. decisions is the guard's DecisionLog (none: unguarded); settle is
 * awaited once all are played, before the time taken is measured. It then
 * waits for the tracing (shutdown resolves to its problems), says how it
 * went on stderr, and exits: 1 if a conversation failed or a problem came.
 */
export async function playAll({ todo, concurrency, play, decisions, settle = async () => {}, shutdown }) {
  let failed = 0;
  const queue = [...todo];
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let c = queue.shift(); c; c = queue.shift()) {
        failed += await playOne(c, play, decisions);
      }
    }),
  );
  await settle();
  const played = performance.now() - start;
  const problems = await shutdown();
  console.error(`live app: played ${todo.length} conversations in ${played.toFixed(0)} ms (${concurrency} at a time)`);
  for (const p of problems) console.error(`live app: ${p}`);
  process.exit(failed > 0 || problems.length > 0 ? 1 : 0);
}

/** playOne plays one conversation and prints its outcome line; it resolves to 1 if it failed. */
async function playOne(c, play, decisions) {
  const outcome = { id: c.id, kind: c.kind, guarded: Boolean(decisions), completed: false, final: null, ran: [] };
  decisions?.byConversation.set(c.id, []);
  let failed = 0;
  try {
    await play(c.id, c.kind, outcome);
    outcome.completed = outcome.final !== null;
  } catch (err) {
    failed = 1;
    outcome.error = String(err.message ?? err);
    console.error(`live app: ${c.id}: ${err.stack ?? err}`);
  }
  if (decisions) outcome.decisions = decisions.byConversation.get(c.id);
  decisions?.byConversation.delete(c.id);
  process.stdout.write(JSON.stringify(outcome) + '\n');
  return failed;
}

/**
 * userPause waits before the user's next message: a later turn of the event
 * loop, as a request would come, or pauseMs (--pause-ms, a user's pause).
 * Within a turn the model answers at once, so the batch processors' timers
 * run between turns and tool calls share milliseconds within them.
 */
export function userPause(pauseMs) {
  return new Promise((resolve) => (pauseMs > 0 ? setTimeout(resolve, pauseMs) : setImmediate(resolve)));
}
