// The conversations test/scenarios/mine-live records for agentguard mine:
// examples/live's kinds (the correct `strong` and the six mistakes) and seven
// more correct ones, so that the good runs vary as real users make them vary
// (the city asked about, a turn without a greeting or a farewell, a lookup
// before the greeting). Every one of them is correct for
// examples/weather/guard.yaml (te1..te6): a known city, no lookup right after
// a lookup, one greeting at most, every sub-agent handing back.
//
// The apps import ../shared/kinds.js; hooks.mjs resolves that import to this
// file, which imports the original under another URL (the ?live query).
import { FAREWELL, GREETING, KINDS as LIVE, USER_TURNS, WEATHER } from '../../../examples/live/shared/kinds.js?live';

export { FAREWELL, GREETING, USER_TURNS, WEATHER };

const transfer = (agent, to) => ({ agent, transfer: to });
const call = (agent, tool, args = {}) => ({ agent, tool, args });
const say = (agent, text) => ({ agent, text });

const helloTurn = [transfer(WEATHER, GREETING), call(GREETING, 'say_hello'), transfer(GREETING, WEATHER), say(WEATHER, 'Hello! Ask me about the weather.')];
const weatherTurn = (city) => [call(WEATHER, 'get_weather', { city }), say(WEATHER, `It is sunny in ${city}, 25 °C.`)];
const byeTurn = [transfer(WEATHER, FAREWELL), call(FAREWELL, 'say_goodbye'), transfer(FAREWELL, WEATHER), say(WEATHER, 'Goodbye!')];

export const KINDS = {
  ...LIVE,
  'strong-paris': { expect: null, turns: [helloTurn, weatherTurn('Paris'), byeTurn] },
  'strong-tokyo': { expect: null, turns: [helloTurn, weatherTurn('Tokyo'), byeTurn] },
  'strong-new-york': { expect: null, turns: [helloTurn, weatherTurn('New York'), byeTurn] },
  // The weather agent answers the greeting itself.
  'no-hello': { expect: null, turns: [[say(WEATHER, 'Hello! Ask me about the weather.')], weatherTurn('Paris'), byeTurn] },
  // ... or the farewell.
  'no-bye': { expect: null, turns: [helloTurn, weatherTurn('Tokyo'), [say(WEATHER, 'Goodbye!')]] },
  // A lookup before the greeting, another in the second turn.
  'weather-first': {
    expect: null,
    turns: [
      [call(WEATHER, 'get_weather', { city: 'New York' }), transfer(WEATHER, GREETING), call(GREETING, 'say_hello'), transfer(GREETING, WEATHER), say(WEATHER, 'Hello! It is sunny in New York.')],
      weatherTurn('London'),
      byeTurn,
    ],
  },
  // No lookup at all: the user only greets and leaves.
  'no-weather': { expect: null, turns: [helloTurn, [say(WEATHER, 'Ask me about any city.')], byeTurn] },
};

/** GOOD are the correct kinds, FAULTY the mistakes (each with the assertion of guard.yaml it breaks). */
export const GOOD = Object.keys(KINDS).filter((k) => KINDS[k].expect === null);
export const FAULTY = Object.keys(KINDS).filter((k) => KINDS[k].expect !== null);
