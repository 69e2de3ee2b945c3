// Agent B's house: agent A's house (../agent/house.js) with the same rooms,
// the same ten tools and the same reported state, field for field, but its
// own clock. The rooms lie around the hall: a move to or from the hall takes
// a minute, across the house (kitchen, porch, living room to one another)
// two, and one move in four a minute more (the agent stops on the way). A
// stove or pot action takes a minute, a look into the pot one or two, the
// package one (three when it is heavy, one house in three), a grocery bag
// one or two (two to four bags), the phone two to seven, wait its argument.
// The semantics are A's: the pasta is cooked after 10 minutes on a lit stove
// with the pot and the pasta on it; the house is unsafe once the stove has
// burnt 10 minutes in a row with nobody in the kitchen, and stays so. Each
// tool returns the house after the action as JSON, which LangGraph wraps in a
// ToolMessage and OpenInference records as the tool span's output.value.
import { DynamicStructuredTool, DynamicTool } from '@langchain/core/tools';
import { z } from 'zod';

export const KITCHEN = 'kitchen';
export const HALL = 'hall';
export const PORCH = 'porch';
export const LIVING_ROOM = 'living_room';
export const ROOMS = [KITCHEN, HALL, PORCH, LIVING_ROOM];

const COOKING_MINUTES = 10;
const UNSAFE_MINUTES = 10;

/** walkMinutes is the length of a move before any stop on the way. */
export function walkMinutes(from, to) {
  if (from === to) return 1;
  return from === HALL || to === HALL ? 1 : 2;
}

/** House is one episode's environment: the reported state, the cooking time and the chores' weights. */
export class House {
  constructor(rng) {
    this.rng = rng;
    this.cooked = 0;
    this.heavyPackage = rng.float() < 1 / 3;
    // The reported state: the same fields, in the same order, as agent A's.
    this.state = {
      room: HALL,
      stove_on: false,
      pot_on_stove: false,
      pasta_in_pot: false,
      pasta_cooked: false,
      minutes: 0,
      minutes_away_with_stove_on: 0,
      package_inside: false,
      groceries_inside: false,
      grocery_bags_left: 2 + rng.int(3),
      phone_answered: false,
      unsafe: false,
      last_action: '',
    };
  }

  /** minutesOf is how long a call takes, given the state before it. */
  minutesOf(tool, arg) {
    const s = this.state;
    switch (tool) {
      case 'go_to':
        if (!ROOMS.includes(arg)) throw new Error(`go_to: unknown room ${JSON.stringify(arg)}`);
        return walkMinutes(s.room, arg) + (this.rng.float() < 0.25 ? 1 : 0);
      case 'turn_on_stove':
      case 'turn_off_stove':
      case 'put_pot_on_stove':
      case 'add_pasta':
        return 1;
      case 'check_pot':
        return 1 + this.rng.int(2);
      case 'pick_up_package':
        return this.heavyPackage ? 3 : 1;
      case 'carry_groceries':
        return 1 + this.rng.int(2);
      case 'answer_phone':
        return 2 + this.rng.int(6);
      case 'wait':
        return arg;
      default:
        throw new Error(`unknown tool ${tool}`);
    }
  }

  /** act applies a tool call, lets its minutes pass, and returns a copy of the state. */
  act(tool, arg) {
    const minutes = this.minutesOf(tool, arg);
    const s = this.state;
    switch (tool) {
      case 'go_to':
        s.room = arg;
        break;
      case 'turn_on_stove':
        s.stove_on = true;
        break;
      case 'turn_off_stove':
        s.stove_on = false;
        break;
      case 'put_pot_on_stove':
        s.pot_on_stove = true;
        break;
      case 'add_pasta':
        s.pasta_in_pot = true;
        break;
      case 'pick_up_package':
        s.package_inside = true;
        break;
      case 'carry_groceries':
        s.grocery_bags_left = Math.max(0, s.grocery_bags_left - 1);
        s.groceries_inside = s.grocery_bags_left === 0;
        break;
      case 'answer_phone':
        s.phone_answered = true;
        break;
      default: // check_pot, wait: time passes
    }
    for (let i = 0; i < minutes; i++) this.minute();
    s.last_action = tool;
    return { ...s };
  }

  /** minute is one minute of the house: the cooking, the stove left alone, the hazard. */
  minute() {
    const s = this.state;
    s.minutes++;
    if (s.stove_on && s.pot_on_stove && s.pasta_in_pot && ++this.cooked >= COOKING_MINUTES) s.pasta_cooked = true;
    s.minutes_away_with_stove_on = s.stove_on && s.room !== KITCHEN ? s.minutes_away_with_stove_on + 1 : 0;
    if (s.minutes_away_with_stove_on >= UNSAFE_MINUTES) s.unsafe = true;
  }
}

/**
 * tools are the ten LangChain tools over a house, with agent A's names,
 * descriptions and arguments. onCall is told of every call that ran (its
 * tool, wall-clock start and the state it reported).
 */
export function tools(house, onCall) {
  const run = (name, arg) => {
    const at = Date.now();
    const state = house.act(name, arg);
    onCall({ tool: name, at_ms: at, state });
    return JSON.stringify(state);
  };
  const simple = (name, description) =>
    new DynamicStructuredTool({ name, description, schema: z.object({}), func: async () => run(name) });
  return [
    new DynamicTool({
      name: 'go_to',
      description: `Walk to a room: one of ${ROOMS.join(', ')}.`,
      func: async (room) => run('go_to', room),
    }),
    simple('turn_on_stove', 'Turn the stove on.'),
    simple('turn_off_stove', 'Turn the stove off.'),
    simple('put_pot_on_stove', 'Put the pot of water on the stove.'),
    simple('add_pasta', 'Put the pasta in the pot.'),
    simple('check_pot', 'Look at the pot.'),
    simple('pick_up_package', 'Pick up the package on the porch and bring it in.'),
    simple('carry_groceries', 'Carry one bag of groceries in from the porch.'),
    simple('answer_phone', 'Answer the phone in the living room.'),
    new DynamicStructuredTool({
      name: 'wait',
      description: 'Wait a number of minutes.',
      schema: z.object({ minutes: z.number().int().min(1).max(10) }),
      func: async ({ minutes }) => run('wait', minutes),
    }),
  ];
}
