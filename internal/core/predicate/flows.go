// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentguard/agentguard/internal/core/detect"
)

// Flow is a predicate over data moving between calls: it holds at a call
// of To whose field carries, by exact substring, a value an earlier call of
// From produced in its field: a detected secret (Detect: a detector's name,
// or any), or without Detect every string of at least MinLength characters.
// It is a meter: the values seen so far are the group's.
type Flow struct {
	From, To  string // TOOL.args or TOOL.result; TOOL may be a glob
	Detect    string
	MinLength int
}

// DefaultFlowMinLength is the shortest string a flow without a detector
// follows: shorter ones ("ok", a city) reappear by chance.
const DefaultFlowMinLength = 8

// maxFlowValues bounds the values a group remembers for a flow, the oldest
// forgotten first.
const maxFlowValues = 64

func decodeFlow(raw any) (*Flow, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("flows: want a map {from: TOOL.result, to: TOOL.args, detect: any}, got %T", raw)
	}
	f := Flow{MinLength: DefaultFlowMinLength}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		var err error
		switch k {
		case "from":
			f.From, err = stringValue("flows: from", m[k])
		case "to":
			f.To, err = stringValue("flows: to", m[k])
		case "detect":
			f.Detect, err = stringValue("flows: detect", m[k])
		case "min_length":
			f.MinLength, err = positiveInt("flows: min_length", m[k])
		default:
			err = fmt.Errorf("flows: unknown key %q: valid keys are from, to, detect and min_length", k)
		}
		if err != nil {
			return nil, err
		}
	}
	return &f, nil
}

// splitEnd reads TOOL.args or TOOL.result.
func splitEnd(key, s string) (tool string, result bool, err error) {
	i := strings.LastIndexByte(s, '.')
	if i <= 0 || (s[i+1:] != "args" && s[i+1:] != "result") {
		return "", false, fmt.Errorf("flows: %s %q: want TOOL.args or TOOL.result (TOOL may be a glob: 'send_*.args')", key, s)
	}
	return s[:i], s[i+1:] == "result", nil
}

func (f *Flow) validate() error {
	if f.From == "" || f.To == "" {
		return errors.New("flows: from and to are required: TOOL.result (or .args) the value comes from, TOOL.args (or .result) it must not reach")
	}
	if _, _, err := splitEnd("from", f.From); err != nil {
		return err
	}
	if _, _, err := splitEnd("to", f.To); err != nil {
		return err
	}
	if f.Detect != "" {
		if _, err := lookupDetector(f.Detect); err != nil {
			return fmt.Errorf("flows: detect: %w", err)
		}
	}
	return nil
}

func (f *Flow) String() string {
	what := fmt.Sprintf("strings of %d+ characters", f.MinLength)
	if f.Detect != "" {
		what = "detected " + f.Detect
	}
	return fmt.Sprintf("flows(%s from %s to %s)", what, f.From, f.To)
}

// flowPlan is a flow compiled.
type flowPlan struct {
	*Flow
	from, to             *regexp.Regexp // the tools, whole names
	fromResult, toResult bool
	det                  *detect.Detector // nil: every long enough string
}

func newFlowPlan(f *Flow) *flowPlan {
	fromTool, fromResult, _ := splitEnd("from", f.From)
	toTool, toResult, _ := splitEnd("to", f.To)
	p := &flowPlan{Flow: f, from: wholeName(fromTool), to: wholeName(toTool), fromResult: fromResult, toResult: toResult}
	if f.Detect != "" {
		d, _ := lookupDetector(f.Detect) // validate checked it
		p.det = &d
	}
	return p
}

func wholeName(glob string) *regexp.Regexp {
	return regexp.MustCompile(`^` + namePattern(glob, `.`) + `$`)
}

// flowValue is a value a From call produced.
type flowValue struct {
	value, detector, tool string
}

// read is what a tool call gives the flow: the values it produces (a From
// call) and the strings it carries (a To call).
func (p *flowPlan) read(ev *evaluation, tool string) meterRead {
	r := meterRead{name: tool}
	if p.from.MatchString(tool) {
		if v, ok := ev.call(p.fromResult); ok {
			r.produced = p.values(v, tool)
		}
	}
	if p.to.MatchString(tool) {
		if v, ok := ev.call(p.toResult); ok {
			r.carried = scalars(v, nil)
		}
	}
	r.ok = r.produced != nil || r.carried != nil
	return r
}

// values are what a From call's field produces: the detected values, or
// the strings long enough.
func (p *flowPlan) values(v pcommon.Value, tool string) []flowValue {
	var out []flowValue
	for _, s := range scalars(v, nil) {
		if p.det == nil {
			if len(s) >= p.MinLength {
				out = append(out, flowValue{s, "", tool})
			}
			continue
		}
		for rest := s; rest != ""; {
			value, detector, ok := p.det.Find(rest)
			if !ok {
				break
			}
			out = append(out, flowValue{value, detector, tool})
			rest = rest[strings.Index(rest, value)+len(value):]
		}
	}
	return out
}

// scalars appends the strings v holds, and the JSON text of its other
// scalars.
func scalars(v pcommon.Value, out []string) []string {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return append(out, v.Str())
	case pcommon.ValueTypeMap:
		for _, x := range v.Map().All() {
			out = scalars(x, out)
		}
		return out
	case pcommon.ValueTypeSlice:
		for _, x := range v.Slice().All() {
			out = scalars(x, out)
		}
		return out
	case pcommon.ValueTypeEmpty:
		return out
	}
	return append(out, string(canonical(v)))
}

// flowState is the values a group's From calls produced, oldest first.
type flowState struct {
	seen []flowValue
}

// step checks a call's strings against the values seen, then remembers
// the values it produced; it holds at every call that carries one.
func (p *flowPlan) step(st *flowState, r meterRead) (string, bool) {
	text, holds := p.carries(st, r)
	for _, v := range r.produced {
		if !slices.Contains(st.seen, v) {
			if len(st.seen) == maxFlowValues {
				st.seen = st.seen[1:]
			}
			st.seen = append(st.seen, v)
		}
	}
	return text, holds
}

func (p *flowPlan) carries(st *flowState, r meterRead) (string, bool) {
	for _, seen := range st.seen {
		for _, s := range r.carried {
			if !strings.Contains(s, seen.value) {
				continue
			}
			where := "args"
			if p.toResult {
				where = "result"
			}
			what := fmt.Sprintf("a string of %d characters", len(seen.value))
			if seen.detector != "" {
				what = "a value (" + mask(seen.value, seen.detector) + ")"
			}
			return fmt.Sprintf("%s's %s carry %s that %s produced earlier", r.name, where, what, seen.tool), true
		}
	}
	return "", false
}
