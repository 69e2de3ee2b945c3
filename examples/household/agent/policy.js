// The model: a seeded, stochastic policy in a LangChain chat model (no LLM is
// reachable here). It plays the ProbGuard paper's household task: set up the
// pasta, maybe dawdle, go off to a second task (the package, the groceries or
// the phone), sometimes with the stove on, sometimes remembering it in time,
// come back and finish the pasta. It decides every call from what it reads in
// its context: the last tool message (the house as the tool reported it), or
// an agentguard alert or denial that the guard hook put there instead of
// running the call, which it heeds as a model would: it secures the stove (back to the
// kitchen, stove off) before anything else, then carries on.
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { HALL, KITCHEN, LIVING_ROOM, PORCH } from './house.js';

/** The policy's probabilities (flags of main.js). */
export const DEFAULT_PROBABILITIES = {
  turnOffFirst: 0.4, // turns the stove off before leaving for the second task
  dawdle: 0.4, // checks the pot (and perhaps waits and checks again) first
  remember: 0.15, // at each decision away with the stove on, remembers it
  returnWhenOff: 0.4, // after the task, stove off: goes back rather than wait
};

const MAX_LINGER = 6; // waits away after the task
const MAX_COOKING = 12; // wait and check rounds until the pasta is cooked
const MAX_WAIT = 5; // minutes of the longest wait

/** Rng is a small seeded generator (mulberry32): the same seed plays the same episode. */
export class Rng {
  constructor(seed) {
    this.a = seed >>> 0;
  }

  float() {
    let t = (this.a = (this.a + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** int is uniform in [0, n). */
  int(n) {
    return Math.floor(this.float() * n);
  }
}

/** The alert's marker in a tool message: the guard hook's answer to a call it did not run. */
export const ALERT_PREFIX = 'agentguard alert:';

/** A denial's marker (deny mode): the call was not run either, and is heeded as an alert. */
export const DENIED_PREFIX = 'Denied by agentguard:';

const call = (tool, args = {}) => ({ tool, args });
const goTo = (room) => call('go_to', { input: room });
const TASKS = ['package', 'groceries', 'phone'];

function taskDone(s, task) {
  return { package: s.package_inside, groceries: s.groceries_inside, phone: s.phone_answered }[task];
}

/**
 * play is the episode as a generator: it yields each call and is resumed with
 * what came back, {state} or {alert}. A call answered by an alert did not
 * run; play heeds the alert and decides again from the house as it is.
 */
function* play(p, rng, first) {
  let s = first;
  // step makes one call and returns the state it reported. A call answered
  // by an alert did not run: with the stove on, the agent secures it and
  // step returns null (the caller decides again); with nothing to secure,
  // the agent has taken note and makes the same call again.
  function* step(c) {
    for (;;) {
      const got = yield c;
      if (got.alert === undefined) {
        s = got.state;
        return s;
      }
      if (s.stove_on) {
        yield* secure();
        return null;
      }
    }
  }
  // secure: the stove off, from the kitchen.
  function* secure() {
    while (s.stove_on) {
      yield* step(s.room === KITCHEN ? call('turn_off_stove') : goTo(KITCHEN));
    }
  }
  const chance = (x) => rng.float() < x;
  const waitSome = () => step(call('wait', { minutes: 1 + rng.int(MAX_WAIT) }));

  // Set up the pasta.
  while (s.room !== KITCHEN) yield* step(goTo(KITCHEN));
  yield* step(call('turn_on_stove')); // once: if an alert has it off again, the agent relights it to finish
  while (!s.pot_on_stove) yield* step(call('put_pot_on_stove'));
  while (!s.pasta_in_pot) yield* step(call('add_pasta'));
  if (chance(p.dawdle)) {
    yield* step(call('check_pot'));
    if (chance(0.5)) {
      yield* step(call('wait', { minutes: 1 + rng.int(2) }));
      yield* step(call('check_pot'));
    }
  }
  const task = TASKS[rng.int(3)];
  if (s.stove_on && chance(p.turnOffFirst)) yield* step(call('turn_off_stove'));

  // The second task, one call at a time from wherever the agent is. Away
  // with the stove on, it may remember the stove before each call: it goes
  // back, turns it off, and carries on.
  let moved = false;
  while (!taskDone(s, task)) {
    if (moved && s.stove_on && chance(p.remember)) {
      yield* secure();
      continue;
    }
    const target = task === 'phone' ? LIVING_ROOM : PORCH;
    let c;
    if (s.room !== target) {
      c = goTo(task !== 'phone' && s.room === KITCHEN ? HALL : target);
    } else {
      c = call({ package: 'pick_up_package', groceries: 'carry_groceries', phone: 'answer_phone' }[task]);
    }
    if ((yield* step(c)) !== null && c.tool === 'go_to') moved = true;
  }

  // Linger: with the stove on it goes back when it remembers; with the
  // stove off, at each decision with probability returnWhenOff.
  for (let i = 0; i < MAX_LINGER && s.room !== KITCHEN; i++) {
    if (s.stove_on ? chance(p.remember) : chance(p.returnWhenOff)) break;
    yield* waitSome();
  }

  // Finish the pasta: back to the kitchen, relight the stove if it is off,
  // wait and check until cooked, turn the stove off.
  while (s.room !== KITCHEN) yield* step(goTo(KITCHEN));
  yield* step(call('check_pot'));
  for (let round = 0; !s.pasta_cooked && round < MAX_COOKING; round++) {
    if (!s.stove_on) {
      yield* step(call('turn_on_stove'));
      continue;
    }
    if ((yield* waitSome()) !== null && !s.pasta_cooked) yield* step(call('check_pot'));
  }
  while (s.stove_on) yield* step(call('turn_off_stove'));
  return task;
}

/**
 * Policy drives play from the messages: it finds the answer to its last
 * call (a tool message) and resumes the generator with it.
 */
export class Policy {
  constructor(probabilities, rng, firstState) {
    this.gen = play(probabilities, rng, firstState);
    this.started = false;
    this.task = undefined;
    this.alertsHeeded = 0;
  }

  /** next returns the next call, or null when the episode is over. */
  next(messages) {
    let r;
    if (!this.started) {
      this.started = true;
      r = this.gen.next();
    } else {
      const last = messages[messages.length - 1];
      if (!(last instanceof ToolMessage)) throw new Error('the policy expects a tool message after each call');
      const text = String(last.content);
      if (text.startsWith(ALERT_PREFIX) || text.startsWith(DENIED_PREFIX)) {
        this.alertsHeeded++;
        r = this.gen.next({ alert: text });
      } else {
        r = this.gen.next({ state: JSON.parse(text) });
      }
    }
    if (r.done) {
      this.task = r.value;
      return null;
    }
    return r.value;
  }
}

/**
 * ScriptedChatModel is the LangChain chat model the agent runs: each turn it
 * waits a model's latency, then answers with the policy's next tool call, or
 * with a final answer when the episode is over.
 */
export class ScriptedChatModel extends BaseChatModel {
  constructor({ policy, latencyMs, rng }) {
    super({});
    this.policy = policy;
    this.latencyMs = latencyMs;
    this.rng = rng;
    this.turn = 0;
  }

  _llmType() {
    return 'scripted';
  }

  invocationParams() {
    return { model: 'scripted-fake-model', temperature: 0.7 };
  }

  bindTools() {
    return this;
  }

  async _generate(messages) {
    if (this.latencyMs > 0) {
      // Uniform in half to one and a half times the mean, like a hosted LLM's.
      await new Promise((resolve) => setTimeout(resolve, this.latencyMs * (0.5 + this.rng.float())));
    }
    const c = this.policy.next(messages);
    this.turn++;
    const promptTokens = 90 + 50 * (this.turn - 1);
    const completionTokens = c ? 12 : 24;
    const message = c
      ? new AIMessage({ content: '', tool_calls: [{ name: c.tool, args: c.args, id: `call_${this.turn}`, type: 'tool_call' }] })
      : new AIMessage({ content: 'The pasta is done and the stove is off.' });
    message.usage_metadata = { input_tokens: promptTokens, output_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
    return {
      generations: [{ text: typeof message.content === 'string' ? message.content : '', message }],
      llmOutput: { tokenUsage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens } },
    };
  }
}
