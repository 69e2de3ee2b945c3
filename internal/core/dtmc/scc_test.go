// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"math/rand/v2"
	"testing"
)

// In the order, a state comes after every state it reaches, unless the two
// reach each other (one component).
func TestSCCOrderPutsSuccessorsFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sv := mustSolver(t, Options{})
	for range 200 {
		n := 2 + r.IntN(40)
		c := randomRatChain(r, n).chain(t)
		sv.precompute(c, randomTarget(r, n))
		order, components := sv.orderBySCC(c)
		if len(order) != len(sv.maybe) {
			t.Fatalf("order of %d states for %d maybe states", len(order), len(sv.maybe))
		}
		reach := reachability(c, sv.class)
		pos := make([]int, n)
		for i, s := range order {
			pos[s] = i
		}
		distinct := 0
		for i, s := range order {
			first := true
			for _, u := range order[:i] {
				if reach[s][u] && reach[u][s] {
					first = false
				}
				if !reach[s][u] && reach[u][s] {
					t.Fatalf("%d (at %d) reaches %d (at %d) and comes first", u, pos[u], s, i)
				}
			}
			if first {
				distinct++
			}
		}
		if distinct != components {
			t.Fatalf("%d components reported, %d found", components, distinct)
		}
	}
}

// reachability[s][u]: u is reachable from s through maybe states.
func reachability(c *Chain, class []uint8) [][]bool {
	n := c.NumStates()
	reach := make([][]bool, n)
	for s := range n {
		reach[s] = make([]bool, n)
		reach[s][s] = true
		stack := []int{s}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			cols, probs := c.Row(v)
			for i, u := range cols {
				if probs[i] > 0 && class[u] == classMaybe && !reach[s][u] {
					reach[s][u] = true
					stack = append(stack, int(u))
				}
			}
		}
	}
	return reach
}

// A long acyclic chain is exact after one sweep in component order (index
// order would need one sweep per state).
func TestIntervalIterationOnAnAcyclicChainTakesOneSweep(t *testing.T) {
	const n = 500
	rows := make([][]Transition, n+2)
	for s := range n {
		rows[s] = []Transition{{s + 1, 0.9}, {n + 1, 0.1}} // on, or to the sink
	}
	rows[n-1] = []Transition{{n, 0.5}, {n + 1, 0.5}}
	rows[n], rows[n+1] = []Transition{{n, 1}}, []Transition{{n + 1, 1}}
	c, err := FromRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	target := make([]bool, n+2)
	target[n] = true
	p := make([]float64, n+2)
	res, err := mustSolver(t, Options{DirectMax: -1, Iteration: IterationInterval}).Reach(c, target, p)
	if err != nil || res.Sweeps != 1 || res.Bound != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	want := 0.5
	for s := n - 1; s >= 0; s-- {
		if !near(p[s], want, 1e-15) {
			t.Fatalf("P(%d) = %v, want %v", s, p[s], want)
		}
		want *= 0.9
	}
}
