// Agent B's model: a seeded, stochastic policy in a LangChain chat model (no
// LLM is reachable here), written apart from agent A's. B is a multitasker:
// it sets the pot on the stove before lighting it and lets the water come
// to the boil before the pasta goes in, then runs an errand plan of one or
// two chores (the groceries, the package, the phone, the package and then
// the groceries, the phone and then the package). Whether it turns the stove
// off first depends on how long it expects to be away; leaving it on, it may
// promise itself to look in after the first chore. It remembers the stove at
// moments, not evenly: when a chore is done, rarely on the way. Looking in,
// it leaves the stove on half the time when the pasta is not cooked yet, and
// goes back out. With its chores done it stays where it is for a spell or
// two, then finishes the pasta.
//
// It is reactive: every turn it reads the last tool message (the house as
// the tool reported it, or an agentguard alert or denial in its place) and
// decides from that and from what it has in mind (its plan, a promise,
// where it is in its routine). An alert or a denial with the stove on sends
// it to the kitchen to turn the stove off; then it carries on with its plan
// and relights the stove to finish the pasta.
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { HALL, KITCHEN, LIVING_ROOM, PORCH } from './house.js';

/** The policy's probabilities (flags of main.js, in kebab case). */
export const DEFAULT_PROBABILITIES = {
  offBeforeLong: 0.5, // turns the stove off before a long errand (groceries, or two chores)
  offBeforeShort: 0.2, // ... before a short one (the package, the phone)
  promise: 0.4, // leaving it on, means to look in after the first chore
  keepPromise: 0.7, // keeps that promise when the chore is done
  rememberAfterChore: 0.2, // with no promise, remembers the stove when a chore is done
  rememberOnTheWay: 0.06, // at each other call away with the stove on
  leaveOnAfterLook: 0.5, // having looked in on pasta not yet cooked, leaves the stove on and goes back out
  lingerOn: 0.65, // chores done, stove on (forgotten): stays for another spell
  lingerOff: 0.5, // chores done, stove off: stays for another spell
  viaHall: 0.5, // leaving the kitchen for the porch or the living room, goes through the hall
};

/** The errand plans and how often B picks each; a long one makes it likelier to turn the stove off. */
export const PLANS = [
  { chores: ['groceries'], weight: 0.3, long: true },
  { chores: ['package'], weight: 0.15, long: false },
  { chores: ['phone'], weight: 0.15, long: false },
  { chores: ['package', 'groceries'], weight: 0.2, long: true },
  { chores: ['phone', 'package'], weight: 0.2, long: true },
];

const MAX_SPELLS = 3; // spells of lingering after the chores
const MAX_ROUNDS = 15; // cooking rounds at the end

/** Rng is a small seeded generator (xorshift32 over a splitmix seed): the same seed plays the same episode. */
export class Rng {
  constructor(seed) {
    let z = (seed + 0x9e3779b9) >>> 0;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    this.x = (z ^ (z >>> 16)) >>> 0 || 1;
  }

  float() {
    let x = this.x;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.x = x >>> 0;
    return this.x / 4294967296;
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

const CHORE_ROOM = { groceries: PORCH, package: PORCH, phone: LIVING_ROOM };
const CHORE_TOOL = { groceries: 'carry_groceries', package: 'pick_up_package', phone: 'answer_phone' };
const DONE = { groceries: 'groceries_inside', package: 'package_inside', phone: 'phone_answered' };

const tool = (name, args = {}) => ({ tool: name, args });
const goTo = (room) => tool('go_to', { input: room });

/**
 * Mind is agent B's policy: decide(observation) returns its next call, or
 * null when it is done. An observation is {state} (what the last call
 * reported; the house before the first call) or {alert} (the last call was
 * not run).
 */
export class Mind {
  constructor(p, rng, house) {
    this.p = p;
    this.rng = rng;
    this.s = house;
    this.phase = 'setup';
    this.setup = this.setupRoutine();
    this.plan = this.pick();
    this.agenda = [...this.plan.chores];
    this.promised = false; // to look in on the stove after the next chore
    this.choreJustDone = false;
    this.looking = null; // the look-in routine: 'going', 'checking', 'deciding'
    this.securing = false; // an alert: the stove off before anything else
    this.spells = 0;
    this.rounds = 0;
    this.checkedOnReturn = false;
    this.lastCall = null;
    this.lookIns = 0;
    this.alertsHeeded = 0;
  }

  chance(x) {
    return this.rng.float() < x;
  }

  pick() {
    let u = this.rng.float() * PLANS.reduce((sum, plan) => sum + plan.weight, 0);
    for (const plan of PLANS) {
      if ((u -= plan.weight) < 0) return plan;
    }
    return PLANS[PLANS.length - 1];
  }

  /** The kitchen routine before the errands, drawn once: pot, stove, maybe the boil, pasta, maybe a look. */
  setupRoutine() {
    const steps = [tool('put_pot_on_stove'), tool('turn_on_stove')];
    if (this.chance(0.6)) steps.push(tool('wait', { minutes: 2 + this.rng.int(2) }), tool('check_pot'));
    steps.push(tool('add_pasta'));
    if (this.chance(0.25)) steps.push(tool('check_pot'));
    return steps;
  }

  get planName() {
    return this.plan.chores.join('+');
  }

  decide(obs) {
    if (obs.alert !== undefined) {
      this.alertsHeeded++;
      if (this.s.stove_on) {
        this.securing = true;
        this.looking = null;
      } else if (this.lastCall) {
        return this.lastCall; // noted: nothing to secure, the same call again
      }
    } else {
      this.s = obs.state;
    }
    const c = this.think();
    this.lastCall = c;
    return c;
  }

  think() {
    const s = this.s;
    if (this.securing) {
      if (s.stove_on) return s.room === KITCHEN ? tool('turn_off_stove') : goTo(KITCHEN);
      this.securing = false;
    }
    if (this.looking) {
      const c = this.lookIn();
      if (c) return c;
    }
    for (;;) {
      switch (this.phase) {
        case 'setup': {
          if (s.room !== KITCHEN) return goTo(KITCHEN);
          const c = this.setup.shift();
          if (c) return c;
          this.phase = 'leave';
          continue;
        }
        case 'leave':
          this.phase = 'errands';
          if (s.stove_on) {
            if (this.chance(this.plan.long ? this.p.offBeforeLong : this.p.offBeforeShort)) return tool('turn_off_stove');
            this.promised = this.chance(this.p.promise);
          }
          continue;
        case 'errands': {
          const c = this.errand();
          if (c) return c;
          this.phase = 'linger';
          continue;
        }
        case 'linger': {
          const c = this.linger();
          if (c) return c;
          this.phase = 'finish';
          continue;
        }
        case 'finish':
          return this.finish();
        default:
          return null;
      }
    }
  }

  /** errand is the next call of the plan, or null when every chore is done. */
  errand() {
    const s = this.s;
    while (this.agenda.length > 0 && s[DONE[this.agenda[0]]]) {
      this.agenda.shift();
      this.choreJustDone = true;
    }
    if (this.agenda.length === 0) return null; // the last chore's moment is the linger's first
    if (s.stove_on && s.room !== KITCHEN) {
      let p = this.p.rememberOnTheWay;
      if (this.choreJustDone) p = this.promised ? this.p.keepPromise : this.p.rememberAfterChore;
      if (this.choreJustDone) this.promised = false;
      this.choreJustDone = false;
      if (this.chance(p)) {
        this.looking = 'going';
        return this.lookIn();
      }
    }
    this.choreJustDone = false;
    const chore = this.agenda[0];
    const room = CHORE_ROOM[chore];
    if (s.room === room) return tool(CHORE_TOOL[chore]);
    if (s.room === KITCHEN && this.chance(this.p.viaHall)) return goTo(HALL);
    return goTo(room);
  }

  /** lookIn is the look-in routine's next call: to the kitchen, at the pot, then the stove left on or off. */
  lookIn() {
    const s = this.s;
    switch (this.looking) {
      case 'going':
        if (s.room !== KITCHEN) return goTo(KITCHEN);
        this.lookIns++;
        this.looking = 'checking';
        return tool('check_pot');
      case 'checking':
        this.looking = null;
        if (!s.stove_on) return null;
        if (!s.pasta_cooked && this.chance(this.p.leaveOnAfterLook)) {
          this.promised = true; // and look in again after the next chore
          return null;
        }
        return tool('turn_off_stove');
      default:
        this.looking = null;
        return null;
    }
  }

  /** linger is a spell spent where the chores left B, or null when it heads back to finish. */
  linger() {
    const s = this.s;
    const first = this.spells === 0;
    if (s.room === KITCHEN || this.spells >= MAX_SPELLS) return null;
    this.spells++;
    if (s.stove_on) {
      // The last chore's moment first: a promise, or remembering; then each spell.
      const remember = first ? (this.promised ? this.p.keepPromise : this.p.rememberAfterChore) : 1 - this.p.lingerOn;
      if (this.chance(remember)) return null;
      return tool('wait', { minutes: 2 + this.rng.int(4) });
    }
    if (!this.chance(this.p.lingerOff)) return null;
    return tool('wait', { minutes: 1 + this.rng.int(4) });
  }

  /** finish: back in the kitchen, a look, the stove relit if need be, waits until cooked, the stove off. */
  finish() {
    const s = this.s;
    if (s.room !== KITCHEN) return goTo(KITCHEN);
    if (!this.checkedOnReturn) {
      this.checkedOnReturn = true;
      return tool('check_pot');
    }
    if (!s.pasta_cooked && this.rounds < MAX_ROUNDS) {
      this.rounds++;
      if (!s.stove_on) return tool('turn_on_stove');
      if (s.last_action === 'wait' && this.chance(0.6)) return tool('check_pot');
      return tool('wait', { minutes: 3 + this.rng.int(2) });
    }
    if (s.stove_on) return tool('turn_off_stove');
    this.phase = 'done';
    return null;
  }
}

/**
 * Policy drives a Mind from the agent's messages: the first turn reads the
 * house as it is, each later one the last tool message.
 */
export class Policy {
  constructor(probabilities, rng, firstState) {
    this.mind = new Mind(probabilities, rng, firstState);
    this.started = false;
  }

  get task() {
    return this.mind.planName;
  }

  get alertsHeeded() {
    return this.mind.alertsHeeded;
  }

  /** next returns the next call, or null when the episode is over. */
  next(messages) {
    if (!this.started) {
      this.started = true;
      return this.mind.decide({ state: this.mind.s });
    }
    const last = messages[messages.length - 1];
    if (!(last instanceof ToolMessage)) throw new Error('the policy expects a tool message after each call');
    const text = String(last.content);
    if (text.startsWith(ALERT_PREFIX) || text.startsWith(DENIED_PREFIX)) return this.mind.decide({ alert: text });
    return this.mind.decide({ state: JSON.parse(text) });
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
      : new AIMessage({ content: 'The chores are done, the pasta is cooked and the stove is off.' });
    message.usage_metadata = { input_tokens: promptTokens, output_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
    return {
      generations: [{ text: typeof message.content === 'string' ? message.content : '', message }],
      llmOutput: { tokenUsage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens } },
    };
  }
}
