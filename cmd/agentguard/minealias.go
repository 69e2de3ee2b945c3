// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agentguard/agentguard/internal/core/predicate"
)

// Aliases: one role under two names. Traces of several frameworks, or of
// two versions of an agent, name the same agent or tool differently
// (weather_agent and weather_agent_v2; get_weather and getWeather); mined
// apart, each would give nonsense pairs (never_after: {x: to_weather_agent,
// y: to_weather_agent_v2}, true only because no run has both). Two
// predicates are taken as one role when they are of the same kind (a tool
// call, a transfer to, an agent taking control), name the same thing once
// case, separators, a version suffix (_v2, -2, .1.3) and a transfer_to_ or
// handoff_to_ prefix are ignored, both happen, and never in the same good
// group. --alias A=B[=C...] declares others: predicate names, or the tool
// or agent names they match. The miner sees each role as one predicate and
// names all its members wherever it names it.

// literal is what a shorthand predicate names, with its kind; false for
// any other predicate (a condition, a glob, args, a latch).
func literal(p predicate.Predicate) (kind, name string, ok bool) {
	if len(p.Args) > 0 || len(p.Result) > 0 || len(p.Capture) > 0 || p.Failed != nil || p.Set != nil ||
		p.Budget != nil || p.Trajectory != nil || p.Allowlist != nil || p.Evaluation != nil || p.Repeats != nil || p.NoProgress != nil {
		return "", "", false
	}
	switch {
	case p.Tool != "" && !predicate.IsGlob(p.Tool):
		return "tool", p.Tool, true
	case p.TransferTo != "" && !predicate.IsGlob(p.TransferTo):
		return "transfer", p.TransferTo, true
	case p.Agent != "" && !predicate.IsGlob(p.Agent):
		return "agent", p.Agent, true
	}
	return "", "", false
}

var (
	versionSuffix = regexp.MustCompile(`[_.-]?v?[0-9]+([._][0-9]+)*$`)
	notAlnum      = regexp.MustCompile(`[^a-z0-9]`)
)

// roleKey is a name with what differs between conventions taken off.
func roleKey(name string) string {
	s := strings.ToLower(name)
	for _, p := range []string{"transfer_to_", "handoff_to_"} {
		s = strings.TrimPrefix(s, p)
	}
	if t := versionSuffix.ReplaceAllString(s, ""); t != "" {
		s = t
	}
	return notAlnum.ReplaceAllString(s, "")
}

// aliasClasses gives each predicate its role's representative (the first
// member in bit order; itself when alone), from the declared aliases and
// those found in the groups (bits of list, the good groups mined).
// Predicates marked skip (value predicates) are alone; auto false finds
// none in the groups (--auto-alias=false).
func aliasClasses(list predicate.List, groups [][]uint64, declared []string, skip map[int]bool, auto bool) ([]int, error) {
	n := len(list)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	union := func(a, b int) {
		a, b = find(a), find(b)
		if a > b {
			a, b = b, a
		}
		parent[b] = a
	}
	for _, spec := range declared {
		var members []int
		for _, name := range strings.Split(spec, "=") {
			i, err := aliasMember(list, name, skip)
			if err != nil {
				return nil, fmt.Errorf("--alias %s: %w", spec, err)
			}
			members = append(members, i)
		}
		if len(members) < 2 {
			return nil, fmt.Errorf("--alias %s: want two names or more, A=B", spec)
		}
		k0, _, _ := literal(list[members[0]].Predicate)
		for _, m := range members[1:] {
			if k, _, _ := literal(list[m].Predicate); k != k0 {
				return nil, fmt.Errorf("--alias %s: %s and %s are not of one kind (a tool call, a transfer, an agent taking control)",
					spec, list[members[0]].Name, list[m].Name)
			}
			union(members[0], m)
		}
	}
	// which predicates each group holds
	masks := make([]uint64, len(groups))
	for g, evs := range groups {
		for _, b := range evs {
			masks[g] |= b
		}
	}
	happened := func(i int) bool {
		return slices.ContainsFunc(masks, func(m uint64) bool { return m>>uint(i)&1 == 1 })
	}
	together := func(i, j int) bool {
		return slices.ContainsFunc(masks, func(m uint64) bool { return m>>uint(i)&1 == 1 && m>>uint(j)&1 == 1 })
	}
	for i := range n {
		ki, li, ok := literal(list[i].Predicate)
		if !auto || !ok || skip[i] || !happened(i) {
			continue
		}
		for j := i + 1; j < n; j++ {
			kj, lj, ok := literal(list[j].Predicate)
			if !ok || skip[j] || kj != ki || roleKey(li) != roleKey(lj) || !happened(j) {
				continue
			}
			apart := true // no member of one class with one of the other
			for a := range n {
				for b := range n {
					if find(a) == find(i) && find(b) == find(j) && together(a, b) {
						apart = false
					}
				}
			}
			if apart && find(i) != find(j) {
				union(i, j)
			}
		}
	}
	out := make([]int, n)
	for i := range out {
		out[i] = find(i)
	}
	return out, nil
}

// aliasMember finds a predicate by its name, or by the tool or agent it
// names.
func aliasMember(list predicate.List, name string, skip map[int]bool) (int, error) {
	for i, p := range list {
		if p.Name == name && !skip[i] {
			if _, _, ok := literal(p.Predicate); !ok {
				return 0, fmt.Errorf("%s is not a tool, transfer or agent predicate", name)
			}
			return i, nil
		}
	}
	for i, p := range list {
		if _, lit, ok := literal(p.Predicate); ok && lit == name && !skip[i] {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no predicate %q, nor a tool or agent of that name in the good runs", name)
}
