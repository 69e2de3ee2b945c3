// SPDX-License-Identifier: Apache-2.0

// Package household generates traces of the household (stove) scenario:
// an agent puts pasta on the stove, then goes off to a second task
// (a package, the groceries, the phone), sometimes leaving the stove on;
// the house is unsafe once the stove burns 10 minutes with nobody in the
// kitchen.
//
// The episodes are played by a seeded, stochastic policy against a
// simulated house with the fixtures' ten tools and minute bookkeeping, and
// traced exactly as the real LangGraph JS agent traced by OpenInference is
// (testdata/traces/household-langgraph): one trace per episode, the same
// resource, scope, span tree, span names, kinds and attributes, the state
// after each action in the TOOL span's output.value.
package household

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The default probabilities of the policy, tuned so that about one episode
// in seven becomes unsafe (13.7% of 1000 for seed 1) and about two thirds of
// those that leave the stove on are saved in time: a risk predictor has
// both outcomes to tell apart.
const (
	DefaultTurnOffFirst  = 0.6
	DefaultDawdle        = 0.4
	DefaultRemember      = 0.25
	DefaultReturnWhenOff = 0.4
)

// Never, as a probability in Options, makes the event impossible (zero
// takes the default).
const Never = -1.0

// DefaultStart is when the first episode starts if Options.Start is zero:
// the day the fixtures were recorded.
var DefaultStart = time.Date(2026, time.December, 1, 21, 0, 0, 0, time.UTC)

// Options are the generator's seed, clock and policy. A zero probability
// takes its default; a negative one (Never) means never, one above 1
// always.
type Options struct {
	// Seed makes the episodes: the same seed, the same episodes and traces.
	Seed int64
	// Start is when the first episode starts (DefaultStart if zero); each
	// later episode starts shortly after the previous one ends.
	Start time.Time
	// TurnOffFirst is the probability that the agent turns the stove off
	// before it leaves the kitchen for the second task.
	TurnOffFirst float64
	// Dawdle is the probability that the agent checks the pot (and perhaps
	// waits and checks again) before it turns to the second task.
	Dawdle float64
	// Remember is, at each decision away from the kitchen with the stove on
	// (before each call after the first move out), the probability that the
	// agent remembers the stove and goes back, leaving the rest undone.
	Remember float64
	// ReturnWhenOff is, at each decision after the second task with the
	// stove off, the probability that the agent goes back rather than wait.
	ReturnWhenOff float64
	// ModelLatency is the mean duration of a model call (uniform in half to
	// one and a half times it), for traces timed like a hosted LLM's; zero
	// keeps the fixtures' scripted model, a millisecond or so.
	ModelLatency time.Duration
}

// probabilities are Options' probabilities resolved to [0, 1].
type probabilities struct {
	turnOffFirst, dawdle, remember, returnWhenOff float64
}

func (o Options) probabilities() probabilities {
	return probabilities{
		turnOffFirst:  resolve(o.TurnOffFirst, DefaultTurnOffFirst),
		dawdle:        resolve(o.Dawdle, DefaultDawdle),
		remember:      resolve(o.Remember, DefaultRemember),
		returnWhenOff: resolve(o.ReturnWhenOff, DefaultReturnWhenOff),
	}
}

func resolve(p, def float64) float64 {
	switch {
	case p == 0:
		return def
	case p < 0:
		return 0
	case p > 1:
		return 1
	}
	return p
}

// Episode is one generated episode: its trace and its labels.
type Episode struct {
	// ID is ep-001, ep-002, … (as many digits as n needs, at least three,
	// so that the IDs sort in order): the trace's session.id and thread_id.
	ID string
	// Traces holds the episode's one trace.
	Traces ptrace.Traces
	// Unsafe tells whether the house became unsafe.
	Unsafe bool
	// UnsafeAt is the 1-based index (by start time) of the first tool call
	// whose state is unsafe; 0 if the episode stayed safe.
	UnsafeAt int
	// Tools is the number of tool calls (TOOL spans).
	Tools int
	// SecondTask is TaskPackage, TaskGroceries or TaskPhone.
	SecondTask string
	// LeftWithStoveOn tells whether the agent left the kitchen with the
	// stove on.
	LeftWithStoveOn bool
	// Steps are the tool calls in order and the states they reported.
	Steps []Step
}

// Label is an episode's entry in labels.json, the fixtures' schema.
type Label struct {
	Unsafe          bool   `json:"unsafe"`
	UnsafeAt        *int   `json:"unsafe_at_tool_index"` // null when safe
	Tools           int    `json:"n_tools"`
	SecondTask      string `json:"second_task"`
	LeftWithStoveOn bool   `json:"left_with_stove_on"`
}

// Label is the episode's labels.json entry.
func (e Episode) Label() Label {
	l := Label{Unsafe: e.Unsafe, Tools: e.Tools, SecondTask: e.SecondTask, LeftWithStoveOn: e.LeftWithStoveOn}
	if e.UnsafeAt > 0 {
		at := e.UnsafeAt
		l.UnsafeAt = &at
	}
	return l
}

// Labels is labels.json: each episode's Label by ID.
func Labels(episodes []Episode) map[string]Label {
	out := make(map[string]Label, len(episodes))
	for _, e := range episodes {
		out[e.ID] = e.Label()
	}
	return out
}

// The two random streams of a seed: what the agent does, and how the trace
// is laid out (IDs, timings), kept apart so that a change to one leaves the
// other's draws alone.
const (
	streamPolicy = 1
	streamTrace  = 2
)

// Generate plays n episodes. The result depends on opts alone.
func Generate(opts Options, n int) []Episode {
	p := opts.probabilities()
	behave := rand.New(rand.NewPCG(uint64(opts.Seed), streamPolicy))
	layout := rand.New(rand.NewPCG(uint64(opts.Seed), streamTrace))
	at := opts.Start
	if at.IsZero() {
		at = DefaultStart
	}
	at = at.Truncate(time.Millisecond)
	episodes := make([]Episode, 0, max(n, 0))
	for i := range n {
		id := episodeID(i+1, n)
		pl := newPlay(p, behave)
		steps := pl.run()
		td := ptrace.NewTraces()
		end := record(td, layout, opts.ModelLatency, id, steps, at)
		episodes = append(episodes, newEpisode(id, td, pl, steps))
		at = nextStart(end, layout)
	}
	return episodes
}

// episodeID is the i-th of n IDs, with as many digits as n needs.
func episodeID(i, n int) string {
	return fmt.Sprintf("ep-%0*d", max(len(strconv.Itoa(n)), 3), i)
}

// nextStart: the next run starts 20 to 150 ms after the last one ended, on
// a whole millisecond, as the fixtures' runs follow one another.
func nextStart(end time.Time, rng *rand.Rand) time.Time {
	gap := 20*time.Millisecond + time.Duration(rng.Int64N(int64(130*time.Millisecond)))
	return end.Add(gap).Truncate(time.Millisecond)
}

func newEpisode(id string, td ptrace.Traces, pl *play, steps []Step) Episode {
	e := Episode{ID: id, Traces: td, Tools: len(steps), SecondTask: pl.task, LeftWithStoveOn: pl.left, Steps: steps}
	for i, s := range steps {
		if s.State.Unsafe {
			e.Unsafe, e.UnsafeAt = true, i+1
			break
		}
	}
	return e
}
