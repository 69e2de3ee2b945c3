// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/predicate"
)

// Atoms over the calls themselves, for what a tool's result does not say:
// which tool an event calls, and what was called before it. An agent whose
// tools return nothing of the state still leaves that much in its spans.
// Counts of calls so far are not proposed: the predicate language has no
// state form for them (a budget holds only at the call that crosses its
// bound, and cannot set a latch), so probguard could not evaluate the
// abstraction abstract chose.

// toolNames are the tools the events call, in name order, as
// predicate.Describe names them (the names {tool: NAME} matches).
func toolNames(eps episodeSet) []string {
	names := map[string]bool{}
	for _, evs := range eps.events {
		for _, ev := range evs {
			if t, ok := strings.CutPrefix(predicate.Describe(ev.Span), "tool "); ok {
				names[strings.TrimSuffix(t, " (failed)")] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(names))
}

// everySpan makes every span an event of the sets toolAtoms compiles: the
// events are chosen already (by the configuration's condition, which may
// read the resource, not kept with the events), and a set evaluates its
// predicates only at its events.
func everySpan() *predicate.Predicate { return &predicate.Predicate{Condition: "true"} }

// toolAtoms are {tool: NAME} for each tool the events call, evaluated by
// the compiled predicates probguard runs, so that each holds exactly where
// the collector's will.
func toolAtoms(eps episodeSet, ts component.TelemetrySettings) ([]atom, error) {
	var out []atom
	for chunk := range slices.Chunk(toolNames(eps), predicate.MaxBits) {
		cfg := predicate.Config{Events: everySpan()}
		for i, tool := range chunk {
			cfg.Predicates = append(cfg.Predicates, predicate.Named{Name: fmt.Sprintf("t%d", i), Predicate: predicate.Predicate{Tool: tool}})
		}
		set, err := predicate.Compile(cfg, predicate.Settings{Telemetry: ts})
		if err != nil {
			return nil, err
		}
		atoms := make([]atom, len(chunk))
		for i, tool := range chunk {
			atoms[i] = atom{name: name("tool_" + tool), call: map[string]any{"tool": tool}, holds: make([]bool, eps.size())}
		}
		eps.eachEvent(func(k int, span ptrace.Span) {
			_, sig := set.Eval(ptrace.NewResourceSpans(), ptrace.NewScopeSpans(), span)
			for i := range atoms {
				atoms[i].holds[k] = predicate.Bits(sig).Has(i)
			}
		})
		out = append(out, atoms...)
	}
	return out, nil
}

// latches are, for each ordered pair of tools X and Y, X called and not
// undone by Y since ({set: {tool: X}, reset: {tool: Y}}: the stove turned
// on and not off, a file opened and not closed), evaluated as probguard's
// latches are: from a set event until a reset event, set winning where
// both hold, released at each episode's start.
func latches(eps episodeSet, tools []atom) []atom {
	var out []atom
	for _, set := range tools {
		for _, reset := range tools {
			if set.name == reset.name {
				continue
			}
			l := atom{name: name(set.call["tool"].(string) + "_until_" + reset.call["tool"].(string)),
				call: map[string]any{"set": set.call, "reset": reset.call}, holds: make([]bool, len(set.holds))}
			for e := range eps.events {
				held := false
				for k := eps.first[e]; k < eps.first[e]+len(eps.events[e]); k++ {
					held = set.holds[k] || (held && !reset.holds[k])
					l.holds[k] = held
				}
			}
			out = append(out, l)
		}
	}
	return out
}

// size is the number of events of every episode.
func (eps episodeSet) size() int {
	n := 0
	for _, evs := range eps.events {
		n += len(evs)
	}
	return n
}

// eachEvent calls f with every event's index in the atoms' holds and its
// span.
func (eps episodeSet) eachEvent(f func(k int, span ptrace.Span)) {
	for e, evs := range eps.events {
		for j, ev := range evs {
			f(eps.first[e]+j, ev.Span)
		}
	}
}
