// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Trajectory compares a group's tool calls with those of a recorded good
// run (OTLP/JSON), as agentevals' and promptfoo's trajectory matches do: it
// is a meter (its state is the calls matched so far) that holds, with At
// "deviation" (the default), at the first call the reference does not
// allow, and with At "complete" at the call that completes the reference.
// `never` over the first and `requires` over the second make the match.
type Trajectory struct {
	// Reference is the recorded run's OTLP/JSON file; its tool calls, in
	// start order, are the events the events condition selects there.
	Reference string
	// Mode: strict (the same calls in the same order, no other), unordered
	// (the same calls in any order), subset (no call the reference does
	// not have, each at most as often), superset (every call of the
	// reference, others allowed).
	Mode string
	// Args says how a call's arguments take part: exact (default), ignore,
	// or only the listed fields, exactly (Fields).
	Args   string
	Fields []string
	At     string
}

// The modes of a trajectory, and what a trajectory predicate holds at.
const (
	ModeStrict    = "strict"
	ModeUnordered = "unordered"
	ModeSubset    = "subset"
	ModeSuperset  = "superset"
	AtDeviation   = "deviation"
	AtComplete    = "complete"
	ArgsExact     = "exact"
	ArgsIgnore    = "ignore"
)

var trajectoryModes = []string{ModeStrict, ModeUnordered, ModeSubset, ModeSuperset}

func decodeTrajectory(raw any) (*Trajectory, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("trajectory: want a map {reference: FILE, mode: strict, args: exact}, got %T", raw)
	}
	t := Trajectory{Mode: ModeStrict, Args: ArgsExact, At: AtDeviation}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		var err error
		switch k {
		case "reference":
			t.Reference, err = stringValue("trajectory: reference", m[k])
		case "mode":
			t.Mode, err = stringValue("trajectory: mode", m[k])
		case "at":
			t.At, err = stringValue("trajectory: at", m[k])
		case "args":
			t.Args, t.Fields, err = decodeTrajectoryArgs(m[k])
		default:
			err = fmt.Errorf("trajectory: unknown key %q: valid keys are reference, mode, args and at", k)
		}
		if err != nil {
			return nil, err
		}
	}
	return &t, nil
}

// decodeTrajectoryArgs reads exact, ignore, or {FIELD: exact|ignore, ...}.
func decodeTrajectoryArgs(raw any) (string, []string, error) {
	switch v := raw.(type) {
	case string:
		return v, nil, nil
	case map[string]any:
		var fields []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			switch v[k] {
			case ArgsExact:
				fields = append(fields, k)
			case ArgsIgnore:
			default:
				return "", nil, fmt.Errorf("trajectory: args: field %q: want exact or ignore, got %v", k, v[k])
			}
		}
		return "fields", fields, nil
	}
	return "", nil, fmt.Errorf("trajectory: args: want exact, ignore or {FIELD: exact|ignore}, got %T", raw)
}

func (t *Trajectory) validate() error {
	switch {
	case t.Reference == "":
		return errors.New("trajectory: reference is required: the OTLP/JSON file of a good run")
	case !slices.Contains(trajectoryModes, t.Mode):
		return fmt.Errorf("trajectory: mode %q: valid modes are %s", t.Mode, strings.Join(trajectoryModes, ", "))
	case t.Args != ArgsExact && t.Args != ArgsIgnore && t.Args != "fields":
		return fmt.Errorf("trajectory: args %q: want exact, ignore or {FIELD: exact|ignore}", t.Args)
	case t.At != AtDeviation && t.At != AtComplete:
		return fmt.Errorf("trajectory: at %q: valid values are %s (the first call the reference does not allow) and %s (the call that completes it)",
			t.At, AtDeviation, AtComplete)
	case t.Mode == ModeSubset && t.At == AtComplete:
		return errors.New("trajectory: a subset run need not make any call, so it has nothing to complete: use at: deviation")
	case t.Mode == ModeSuperset && t.At == AtDeviation:
		return errors.New("trajectory: a superset run may make any other call, so it cannot deviate: use at: complete")
	}
	return nil
}

func (t *Trajectory) String() string {
	return fmt.Sprintf("trajectory(%s of %s, args %s, at %s)", t.Mode, t.Reference, t.argsText(), t.At)
}

func (t *Trajectory) argsText() string {
	if t.Args == "fields" {
		return "[" + strings.Join(t.Fields, ", ") + "]"
	}
	return t.Args
}

// trajectoryPlan is a trajectory compiled: the reference's call keys.
type trajectoryPlan struct {
	*Trajectory
	calls []refCall
	// distinct keys and how often each occurs, for the modes that count
	keys   []uint64
	counts []int
}

type refCall struct {
	key  uint64
	text string
}

// callKey is a call's key under the trajectory's args, and how it reads.
func (p *trajectoryPlan) callKey(tool string, args pcommon.Value, found bool) (uint64, string) {
	h := fnv(tool)
	switch {
	case p.Args == ArgsIgnore:
		return h, tool
	case p.Args == ArgsExact:
		text := "null"
		if found {
			text = string(canonical(args))
		}
		return fnvMore(h, text), tool + " " + text
	}
	parts := make([]string, len(p.Fields))
	for i, f := range p.Fields {
		parts[i] = f + "=null"
		if found {
			if v, ok := lookup(args, f); ok {
				parts[i] = f + "=" + string(canonical(v))
			}
		}
		h = fnvMore(h, parts[i])
	}
	return h, tool + " {" + strings.Join(parts, ", ") + "}"
}

// loadTrajectory reads the reference's tool calls with s's events
// condition, as the group's are read.
func (s *Set) loadTrajectory(t *Trajectory) (*trajectoryPlan, error) {
	raw, err := os.ReadFile(t.Reference)
	if err != nil {
		return nil, fmt.Errorf("trajectory: reference: %w", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err == nil && top["resourceSpans"] == nil {
		err = fmt.Errorf("a JSON object without resourceSpans (its keys: %q)", slices.Sorted(maps.Keys(top)))
		return nil, fmt.Errorf("trajectory: reference %s is not OTLP/JSON traces (an ExportTraceServiceRequest, as the file exporter and agentguard's recorders write): %w", t.Reference, err)
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	if err != nil {
		return nil, fmt.Errorf("trajectory: reference %s is not OTLP/JSON traces (an ExportTraceServiceRequest, as the file exporter and agentguard's recorders write): %w", t.Reference, err)
	}
	p := &trajectoryPlan{Trajectory: t}
	type located struct {
		rs   ptrace.ResourceSpans
		ss   ptrace.ScopeSpans
		span ptrace.Span
	}
	var spans []located
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				spans = append(spans, located{rs, ss, sp})
			}
		}
	}
	slices.SortStableFunc(spans, func(a, b located) int { return cmp.Compare(a.span.StartTimestamp(), b.span.StartTimestamp()) })
	for _, l := range spans {
		ev := s.newEvaluation(l.rs, l.ss, l.span)
		ev.facts.gather(l.span, s.agents)
		if !ev.holds(&s.events) || deniedByHook(l.span) {
			ev.close()
			continue
		}
		if tool, ok := ev.facts.toolOf(); ok {
			args, found := ev.call(false)
			key, text := p.callKey(tool, args, found)
			p.calls = append(p.calls, refCall{key, text})
		}
		ev.close()
	}
	if len(p.calls) == 0 {
		return nil, fmt.Errorf("trajectory: reference %s holds no tool call (%d spans read): record a run that calls tools", t.Reference, len(spans))
	}
	for _, c := range p.calls {
		if i := slices.Index(p.keys, c.key); i >= 0 {
			p.counts[i]++
		} else {
			p.keys, p.counts = append(p.keys, c.key), append(p.counts, 1)
		}
	}
	return p, nil
}

// trajectoryState is a group's progress against the reference: the next
// call (strict), the calls left (the other modes), and whether the
// predicate has held (it holds once).
type trajectoryState struct {
	next int
	left []int
	done bool
}

// step matches one call; it says why where the predicate holds.
func (p *trajectoryPlan) step(st *trajectoryState, r meterRead) (string, bool) {
	if st.done {
		return "", false
	}
	if st.left == nil {
		st.left = slices.Clone(p.counts)
	}
	if p.Mode == ModeStrict {
		return p.stepStrict(st, r)
	}
	i := slices.Index(p.keys, r.hash)
	if i >= 0 && st.left[i] > 0 {
		st.left[i]--
		if p.At == AtComplete && !slices.ContainsFunc(st.left, func(n int) bool { return n > 0 }) {
			st.done = true
			return fmt.Sprintf("the run has made every call of %s (%d calls, %s)", p.Reference, len(p.calls), p.Mode), true
		}
		return "", false
	}
	if p.Mode == ModeSuperset {
		return "", false // any other call is allowed
	}
	st.done = true // a deviation: the run can no longer complete the reference either
	if p.At != AtDeviation {
		return "", false
	}
	if i < 0 {
		return fmt.Sprintf("%s is not a call of %s (%s)", r.text, p.Reference, p.Mode), true
	}
	return fmt.Sprintf("%s once more than in %s (%s)", r.text, p.Reference, p.Mode), true
}

func (p *trajectoryPlan) stepStrict(st *trajectoryState, r meterRead) (string, bool) {
	if st.next < len(p.calls) && p.calls[st.next].key == r.hash {
		st.next++
		if p.At == AtComplete && st.next == len(p.calls) {
			st.done = true
			return fmt.Sprintf("the run has made the %d calls of %s, in order", len(p.calls), p.Reference), true
		}
		return "", false
	}
	st.done = true // a deviation: the run can no longer complete the reference either
	if p.At != AtDeviation {
		return "", false
	}
	if st.next == len(p.calls) {
		return fmt.Sprintf("call %d, %s, after all %d calls of %s", st.next+1, r.text, len(p.calls), p.Reference), true
	}
	return fmt.Sprintf("call %d is %s where %s has %s", st.next+1, r.text, p.Reference, p.calls[st.next].text), true
}
