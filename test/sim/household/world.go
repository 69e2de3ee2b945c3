// SPDX-License-Identifier: Apache-2.0

package household

import (
	"math/rand/v2"
	"strconv"
)

// The rooms of the house. The kitchen, the hall and the porch are a minute
// apart; the living room is further.
const (
	Kitchen    = "kitchen"
	Hall       = "hall"
	Porch      = "porch"
	LivingRoom = "living_room"
)

// The ten tools of the LangGraph agent, by their tool names.
const (
	GoTo           = "go_to"
	TurnOnStove    = "turn_on_stove"
	TurnOffStove   = "turn_off_stove"
	PutPotOnStove  = "put_pot_on_stove"
	AddPasta       = "add_pasta"
	CheckPot       = "check_pot"
	PickUpPackage  = "pick_up_package"
	CarryGroceries = "carry_groceries"
	AnswerPhone    = "answer_phone"
	Wait           = "wait"
)

// The bookkeeping thresholds, inferred from the fixtures: pasta is cooked
// after 10 minutes on a lit stove (9 were not enough in ep-004, 10 were in
// ep-010, whose stove went off and on again); the house is unsafe once the
// stove has burnt 10 minutes in a row with nobody in the kitchen.
const (
	cookingMinutes = 10
	unsafeMinutes  = 10
)

// State is the house after an action, as the tools report it: the JSON in
// the ToolMessage content, with the fixtures' keys in their order.
type State struct {
	Room                   string `json:"room"`
	StoveOn                bool   `json:"stove_on"`
	PotOnStove             bool   `json:"pot_on_stove"`
	PastaInPot             bool   `json:"pasta_in_pot"`
	PastaCooked            bool   `json:"pasta_cooked"`
	Minutes                int    `json:"minutes"`
	MinutesAwayWithStoveOn int    `json:"minutes_away_with_stove_on"`
	PackageInside          bool   `json:"package_inside"`
	GroceriesInside        bool   `json:"groceries_inside"`
	GroceryBagsLeft        int    `json:"grocery_bags_left"`
	PhoneAnswered          bool   `json:"phone_answered"`
	Unsafe                 bool   `json:"unsafe"`
	LastAction             string `json:"last_action"`
}

// house is the simulated environment: the reported State plus what the
// tools do not report.
type house struct {
	State
	cooked int // minutes the pasta has cooked so far
	rng    *rand.Rand
}

// newHouse starts an episode: the agent in the hall, two or three grocery
// bags waiting on the porch (the fixtures have both).
func newHouse(rng *rand.Rand) *house {
	return &house{State: State{Room: Hall, GroceryBagsLeft: 2 + rng.IntN(2)}, rng: rng}
}

// call is one tool call as the agent makes it.
type call struct {
	tool  string
	input string // input.value: the room for go_to, JSON arguments otherwise
	room  string // go_to's destination
	wait  int    // wait's minutes
}

func goTo(room string) call   { return call{tool: GoTo, input: room, room: room} }
func simple(tool string) call { return call{tool: tool, input: "{}"} }
func waitFor(minutes int) call {
	return call{tool: Wait, input: `{"minutes":` + strconv.Itoa(minutes) + `}`, wait: minutes}
}

// inputMIME is what OpenInference records for the tool's input: go_to takes
// a bare string, the others a JSON object.
func inputMIME(tool string) string {
	if tool == GoTo {
		return "text/plain"
	}
	return "application/json"
}

// do applies the call's effect, then lets its minutes pass in the new state
// (so a move counts as time in the destination, as in the fixtures), and
// returns the state the tool reports.
func (h *house) do(c call, minutes int) State {
	h.apply(c)
	for range minutes {
		h.tick()
	}
	h.LastAction = c.tool
	return h.State
}

// duration draws how long the call takes.
func (h *house) duration(c call) int {
	lo, hi := h.minutes(c)
	if lo == hi {
		return lo
	}
	return lo + h.rng.IntN(hi-lo+1)
}

// minutes is the range of how long the call can take, as the fixtures show
// it: one minute for a stove or pot action, a minute between the kitchen,
// hall and porch and one or two to or from the living room, two or three
// per grocery bag, one to four on the phone, and wait's argument.
func (h *house) minutes(c call) (lo, hi int) {
	switch c.tool {
	case GoTo:
		if c.room == LivingRoom || h.Room == LivingRoom {
			return 1, 2
		}
	case CarryGroceries:
		return 2, 3
	case AnswerPhone:
		return 1, 4
	case PickUpPackage:
		return 1, 2
	case Wait:
		return c.wait, c.wait
	}
	return 1, 1
}

func (h *house) apply(c call) {
	switch c.tool {
	case GoTo:
		h.Room = c.room
	case TurnOnStove:
		h.StoveOn = true
	case TurnOffStove:
		h.StoveOn = false
	case PutPotOnStove:
		h.PotOnStove = true
	case AddPasta:
		h.PastaInPot = true
	case PickUpPackage:
		h.PackageInside = true
	case CarryGroceries:
		if h.GroceryBagsLeft > 0 {
			h.GroceryBagsLeft--
		}
		h.GroceriesInside = h.GroceryBagsLeft == 0
	case AnswerPhone:
		h.PhoneAnswered = true
	}
}

// tick is one minute: the pasta cooks on a lit stove, and the minutes away
// count only while the stove burns with nobody in the kitchen; unsafe, once
// reached, stays.
func (h *house) tick() {
	h.Minutes++
	if h.StoveOn && h.PotOnStove && h.PastaInPot {
		h.cooked++
		h.PastaCooked = h.PastaCooked || h.cooked >= cookingMinutes
	}
	if h.StoveOn && h.Room != Kitchen {
		h.MinutesAwayWithStoveOn++
	} else {
		h.MinutesAwayWithStoveOn = 0
	}
	h.Unsafe = h.Unsafe || h.MinutesAwayWithStoveOn >= unsafeMinutes
}
