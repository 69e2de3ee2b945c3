// SPDX-License-Identifier: Apache-2.0

package pattern

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// How strong a mined assertion is. Holding on every good group says little
// when the assertion would hold on most groups anyway: never_after(x, y)
// holds in any group where y happens to come before x, and two groups of
// the same length with the same events hold it by chance half the time
// each. The chance figure is that probability under a null model: the
// events of a group drawn independently from the events seen (their bit
// vectors, at the frequencies of the good runs, with the bad runs' when
// given), its length kept. For each candidate it is the product over the
// good groups of the probability that a random group of that length holds
// the assertion (no violation, nothing pending), computed exactly by
// running the pattern as a small automaton over that distribution. A small
// figure says the runs show an order, a count or a presence that chance
// would rarely give; docs/patterns.md says what it does not say.

// distribution gathers the events of the good and the bad groups.
func (m *miner) distribution() {
	count := map[uint64]int{}
	total := 0
	for _, gs := range [][][]uint64{m.groups, m.opts.Against} {
		for _, g := range gs {
			for _, b := range g {
				count[b]++
				total++
			}
		}
	}
	m.dist = make([]uint64, 0, len(count))
	for b := range count {
		m.dist = append(m.dist, b)
	}
	slices.Sort(m.dist) // the same sums in the same order every run
	m.distP = make([]float64, len(m.dist))
	for i, b := range m.dist {
		m.distP[i] = float64(count[b]) / float64(total)
	}
	m.lens = map[int]int{}
	for _, g := range m.groups {
		m.lens[len(g)]++
	}
}

// automaton is a pattern read event by event: from start, step gives the
// next state for an event of a type (classify) or -1 where the assertion is
// violated; accept says the assertion holds when the group ends there
// (nothing pending).
type automaton struct {
	states, types int
	classify      func(b uint64) int
	step          func(s, t int) int
	accept        func(s int) bool
}

// log10Chance is log10 of the probability that every good group, each drawn
// at random with its length, holds the assertion the automaton reads.
func (m *miner) log10Chance(a automaton) float64 {
	pt := make([]float64, a.types)
	for i, b := range m.dist {
		pt[a.classify(b)] += m.distP[i]
	}
	longest := 0
	for l := range m.lens {
		longest = max(longest, l)
	}
	at := make([]float64, longest+1) // at[L]: P(a group of L events holds it)
	v := make([]float64, a.states)
	v[0] = 1
	next := make([]float64, a.states)
	for l := 0; ; l++ {
		for s, p := range v {
			if a.accept(s) {
				at[l] += p
			}
		}
		if l == longest {
			break
		}
		clear(next)
		for s, p := range v {
			if p == 0 {
				continue
			}
			for t, q := range pt {
				if q == 0 {
					continue
				}
				if n := a.step(s, t); n >= 0 {
					next[n] += p * q
				}
			}
		}
		v, next = next, v
	}
	sum := 0.0
	for l, n := range m.lens {
		sum += float64(n) * math.Log10(at[l])
	}
	return sum
}

func (m *miner) has(i int) func(uint64) bool {
	return func(b uint64) bool { return b>>uint(i)&1 == 1 }
}

func (m *miner) hasAny(is []int) func(uint64) bool {
	var mask uint64
	for _, i := range is {
		mask |= 1 << uint(i)
	}
	return func(b uint64) bool { return b&mask != 0 }
}

// types numbers an event by which of the tests hold: bit j for test j.
func types(tests ...func(uint64) bool) (int, func(uint64) int) {
	return 1 << len(tests), func(b uint64) int {
		t := 0
		for j, f := range tests {
			if f(b) {
				t |= 1 << j
			}
		}
		return t
	}
}

// automatonOf reads the candidate's pattern; states are numbered from 0,
// the start.
func (m *miner) automatonOf(c cand) automaton {
	all := func(int) bool { return true }
	switch c.pat {
	case "requires": // 0 not yet, 1 seen
		n, cl := types(m.has(c.x))
		return automaton{2, n, cl, func(s, t int) int { return max(s, t) }, func(s int) bool { return s == 1 }}
	case "first": // 0 start, 1 the first event was x
		n, cl := types(m.has(c.x))
		return automaton{2, n, cl, func(s, t int) int {
			if s == 0 && t == 0 {
				return -1
			}
			return 1
		}, func(s int) bool { return s == 1 }}
	case "never":
		n, cl := types(m.has(c.x))
		return automaton{1, n, cl, func(s, t int) int {
			if t == 1 {
				return -1
			}
			return 0
		}, all}
	case "max_calls": // the calls so far
		n, cl := types(m.has(c.x))
		return automaton{c.k + 1, n, cl, func(s, t int) int {
			if s+t > c.k {
				return -1
			}
			return s + t
		}, all}
	case "max_consecutive": // the run so far
		n, cl := types(m.has(c.x))
		return automaton{c.k + 1, n, cl, func(s, t int) int {
			switch {
			case t == 0:
				return 0
			case s+1 > c.k:
				return -1
			}
			return s + 1
		}, all}
	case "before": // 0 undecided, 1 x came first; type bit 0 x, bit 1 y
		n, cl := types(m.has(c.x), m.has(c.y))
		return automaton{2, n, cl, func(s, t int) int {
			switch {
			case s == 1 || t&1 == 1:
				return 1
			case t&2 != 0:
				return -1
			}
			return 0
		}, all}
	case "never_after": // 0 before the first x, 1 after it
		n, cl := types(m.has(c.x), m.has(c.y))
		return automaton{2, n, cl, func(s, t int) int {
			switch {
			case s == 1 && t&2 != 0:
				return -1
			case s == 1 || t&1 == 1:
				return 1
			}
			return 0
		}, all}
	case "response", "handoff_returns":
		// 0 nothing owed, d in 1..k: the events left to see the goal in
		y := m.has(c.y)
		gap := func(uint64) bool { return true } // response: anything between
		if c.pat == "response" && c.ys != nil {
			y = m.hasAny(c.ys)
		}
		if c.pat == "handoff_returns" {
			gap = m.hasAny(c.ys)
		}
		n, cl := types(m.has(c.x), y, gap)
		return automaton{c.k + 1, n, cl, func(s, t int) int {
			x, goal, between := t&1 != 0, t&2 != 0, t&4 != 0
			switch {
			case s == 0 || goal:
				if x {
					return c.k
				}
				return 0
			case !between || s == 1:
				return -1
			}
			return s - 1 // a new x owes no earlier than this one
		}, func(s int) bool { return s == 0 }}
	}
	panic("no automaton for pattern " + c.pat)
}

// score sets the candidate's events, chance and weakness.
func (m *miner) score(c *cand) {
	occ := func(i int) int {
		n := 0
		for g := range m.groups {
			n += len(m.pos[g][i])
		}
		return n
	}
	switch c.pat {
	case narrows:
		nw := m.preds[c.y].Narrows
		c.events = nw.Calls
		c.log10 = math.Log10(float64(nw.Once+1) / float64(nw.Calls+1))
	default:
		c.log10 = m.log10Chance(m.automatonOf(*c))
		switch c.pat {
		case "first":
			c.events = len(m.groups)
		case "never":
			for _, g := range m.groups {
				c.events += len(g)
			}
		case "before":
			c.events = occ(c.y)
		default:
			c.events = occ(c.x)
		}
	}
	chance := math.Pow(10, c.log10)
	weakSupport := c.support < m.opts.MinSupport
	c.weak = weakSupport || chance > m.opts.MaxChance
	if !c.weak {
		return
	}
	groups := plural(c.support, "group")
	if weakSupport {
		groups += fmt.Sprintf(" (fewer than %d)", m.opts.MinSupport)
	}
	switch {
	case c.pat == narrows:
		c.why = fmt.Sprintf("weak: exercised in %s by %s, a new call shows a value not seen with probability %s",
			groups, plural(c.events, "call"), FormatChance(c.log10))
	case c.pat == "never" && c.log10 == 0:
		c.why = fmt.Sprintf("weak: %s never happened in the runs given (%s): nothing shows that it may not; keep it if you know",
			m.preds[c.x].Name, plural(c.events, "good event"))
	default:
		c.why = fmt.Sprintf("weak: exercised in %s, holds by chance with probability %s", groups, FormatChance(c.log10))
	}
}

// FormatChance writes a probability given by its log10: 0.41, 0.0031,
// 2.5e-07.
func FormatChance(log10 float64) string {
	switch {
	case math.IsInf(log10, -1):
		return "0"
	case log10 >= -3:
		return strconv.FormatFloat(math.Pow(10, log10), 'g', 2, 64)
	}
	e := math.Floor(log10)
	mant := math.Pow(10, log10-e)
	if mant >= 9.95 {
		mant, e = 1, e+1
	}
	return fmt.Sprintf("%.1fe%03d", mant, int(e))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
