// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"fmt"
	"sort"
)

// Counts is the sufficient statistic of learning: how often each ordered pair
// of states occurred consecutively (self-loops included, and the last state
// of each trace to End), how often each state started a trace, and how many
// traces there were. Tables learned apart add up to the table of the union.
type Counts struct {
	pairs  map[[2]State]uint64
	starts map[State]uint64
	traces uint64
}

// NewCounts returns an empty table.
func NewCounts() *Counts {
	return &Counts{pairs: map[[2]State]uint64{}, starts: map[State]uint64{}}
}

// AddTrace counts one trace: its sequence of abstract states, one an event.
// The trace ends in End, which must not appear in it.
func (c *Counts) AddTrace(states []State) error {
	if len(states) == 0 {
		return nil
	}
	for i, s := range states {
		if s == End {
			return fmt.Errorf("event %d: a trace's events cannot be the end state; it is added after the last", i)
		}
	}
	c.traces++
	c.starts[states[0]]++
	for i := 1; i < len(states); i++ {
		c.pairs[[2]State{states[i-1], states[i]}]++
	}
	c.pairs[[2]State{states[len(states)-1], End}]++
	return nil
}

// Add adds n to the count of the pair (from, to).
func (c *Counts) Add(from, to State, n uint64) {
	if n > 0 {
		c.pairs[[2]State{from, to}] += n
	}
}

// Remove takes n from the count of the pair (from, to), down to nothing.
func (c *Counts) Remove(from, to State, n uint64) {
	k := [2]State{from, to}
	if c.pairs[k] <= n {
		delete(c.pairs, k)
		return
	}
	c.pairs[k] -= n
}

// AddStarts adds n traces starting in s (and so n traces).
func (c *Counts) AddStarts(s State, n uint64) {
	if n > 0 {
		c.starts[s] += n
		c.traces += n
	}
}

// Merge adds another table into this one.
func (c *Counts) Merge(o *Counts) {
	for p, n := range o.pairs {
		c.pairs[p] += n
	}
	for s, n := range o.starts {
		c.starts[s] += n
	}
	c.traces += o.traces
}

// Pair is the count of the pair (from, to).
func (c *Counts) Pair(from, to State) uint64 { return c.pairs[[2]State{from, to}] }

// Starts is how many traces started in s.
func (c *Counts) Starts(s State) uint64 { return c.starts[s] }

// Traces is the number of traces counted.
func (c *Counts) Traces() uint64 { return c.traces }

// PairCount is one entry of the table.
type PairCount struct {
	From, To State
	N        uint64
}

// Pairs lists the non-zero pairs in a reproducible order.
func (c *Counts) Pairs() []PairCount {
	out := make([]PairCount, 0, len(c.pairs))
	for p, n := range c.pairs {
		out = append(out, PairCount{p[0], p[1], n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return lessByName(out[i].From, out[j].From)
		}
		return lessByName(out[i].To, out[j].To)
	})
	return out
}

// observed is every state the table mentions.
func (c *Counts) observed() map[State]bool {
	seen := map[State]bool{}
	for p := range c.pairs {
		seen[p[0]], seen[p[1]] = true, true
	}
	for s := range c.starts {
		seen[s] = true
	}
	return seen
}

// Equal reports whether two tables hold the same counts.
func (c *Counts) Equal(o *Counts) bool {
	if c.traces != o.traces || len(c.pairs) != len(o.pairs) || len(c.starts) != len(o.starts) {
		return false
	}
	for p, n := range c.pairs {
		if o.pairs[p] != n {
			return false
		}
	}
	for s, n := range c.starts {
		if o.starts[s] != n {
			return false
		}
	}
	return true
}
