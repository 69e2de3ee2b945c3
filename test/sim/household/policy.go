// SPDX-License-Identifier: Apache-2.0

package household

import "math/rand/v2"

// The second tasks, as labels.json names them.
const (
	TaskPackage   = "package"
	TaskGroceries = "groceries"
	TaskPhone     = "phone"
)

// Bounds that keep every episode finite whatever the probabilities.
const (
	maxLinger   = 6  // waits away from the kitchen after the second task
	maxCooking  = 12 // wait/check_pot rounds until the pasta is cooked
	maxWaitTime = 5  // minutes of the longest wait
)

// Step is one tool call and the state it reported.
type Step struct {
	Tool  string
	Input string
	State State
}

// play is one episode of the agent: the scripted, stochastic policy of the
// fixtures' ScriptedChatModel, deciding each call from the state the last
// tool reported.
type play struct {
	p     probabilities
	rng   *rand.Rand
	house *house
	steps []Step
	task  string
	left  bool // left the kitchen with the stove on
}

func newPlay(p probabilities, rng *rand.Rand) *play {
	return &play{p: p, rng: rng, house: newHouse(rng)}
}

// run plays the whole episode: set up the pasta, maybe dawdle, leave for the
// second task, come back, finish the pasta.
func (pl *play) run() []Step {
	pl.do(goTo(Kitchen))
	pl.do(simple(TurnOnStove))
	pl.do(simple(PutPotOnStove))
	pl.do(simple(AddPasta))
	pl.dawdle()
	pl.task = pl.pickTask()
	if pl.chance(pl.p.turnOffFirst) {
		pl.do(simple(TurnOffStove))
	}
	pl.left = pl.house.StoveOn
	if pl.secondTask() {
		pl.linger()
	}
	pl.do(goTo(Kitchen))
	pl.finishPasta()
	return pl.steps
}

func (pl *play) do(c call) State {
	s := pl.house.do(c, pl.house.duration(c))
	pl.steps = append(pl.steps, Step{Tool: c.tool, Input: c.input, State: s})
	return s
}

func (pl *play) chance(p float64) bool { return pl.rng.Float64() < p }

func (pl *play) waitSome() { pl.do(waitFor(1 + pl.rng.IntN(maxWaitTime))) }

// dawdle: sometimes the agent checks the pot, and perhaps waits a minute or
// two and checks again, before it turns to the second task.
func (pl *play) dawdle() {
	if !pl.chance(pl.p.dawdle) {
		return
	}
	pl.do(simple(CheckPot))
	if pl.chance(0.5) {
		pl.do(waitFor(1 + pl.rng.IntN(2)))
		pl.do(simple(CheckPot))
	}
}

func (pl *play) pickTask() string {
	return []string{TaskPackage, TaskGroceries, TaskPhone}[pl.rng.IntN(3)]
}

// secondTask walks to the task and does it, one call at a time. After the
// first move out of the kitchen, an agent whose stove burns may remember it
// before each call and break off; secondTask reports whether the task got
// done (and so whether the agent is still away, free to linger).
func (pl *play) secondTask() bool {
	for i, c := range pl.taskCalls() {
		if i > 0 && pl.remembers() {
			return false
		}
		pl.do(c)
	}
	return true
}

// taskCalls is the route and the work of the second task. The number of
// bags is read now: carrying them is one call per bag.
func (pl *play) taskCalls() []call {
	switch pl.task {
	case TaskPhone:
		return []call{goTo(LivingRoom), simple(AnswerPhone)}
	case TaskPackage:
		return []call{goTo(Hall), goTo(Porch), simple(PickUpPackage)}
	}
	calls := []call{goTo(Hall), goTo(Porch)}
	for range pl.house.GroceryBagsLeft {
		calls = append(calls, simple(CarryGroceries))
	}
	return calls
}

// remembers: away with the stove on, the agent thinks of it with
// probability remember at each decision.
func (pl *play) remembers() bool {
	return pl.house.StoveOn && pl.chance(pl.p.remember)
}

// linger: the task done, the agent stays away a while, waiting. With the
// stove on it goes back when it remembers the stove; with the stove off,
// with probability returnWhenOff at each decision.
func (pl *play) linger() {
	for range maxLinger {
		if pl.remembers() || (!pl.house.StoveOn && pl.chance(pl.p.returnWhenOff)) {
			return
		}
		pl.waitSome()
	}
}

// finishPasta, back in the kitchen: check the pot, relight the stove if it
// was turned off, wait and check until the pasta is cooked, turn the stove
// off. The agent reads each reported state, so a wait that finishes the
// pasta needs no further check.
func (pl *play) finishPasta() {
	s := pl.do(simple(CheckPot))
	if !s.PastaCooked && !s.StoveOn {
		s = pl.do(simple(TurnOnStove))
	}
	for round := 0; !s.PastaCooked && round < maxCooking; round++ {
		if s = pl.do(waitFor(1 + pl.rng.IntN(maxWaitTime))); s.PastaCooked {
			break
		}
		s = pl.do(simple(CheckPot))
	}
	if s.StoveOn {
		pl.do(simple(TurnOffStove))
	}
}
