// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"context"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/texpr"
)

// A tool call's arguments and result, as the conventions of the shorthand
// table record them (seen in testdata/traces):
//
//	arguments                                   result
//	Google ADK: gcp.vertex.agent.tool_call_args gcp.vertex.agent.tool_response
//	GenAI:      gen_ai.tool.call.arguments      gen_ai.tool.call.result
//	OpenInference: input.value                  output.value
//	OpenLLMetry:   traceloop.entity.input       traceloop.entity.output
//
// The first found in that order is the call's. (A call that threw under
// Traceloop's LangChain instrumentation has neither: see readCall.) A value that is JSON text
// of an object or array is parsed (once per span, through the Set's memo,
// however many predicates read it); any other text is a string (a
// LangChain tool of one argument gets its argument bare: input.value "New
// York"). Then the wrappers LangChain adds are taken off: Traceloop's input
// {"args": [X]} is X; OpenInference's output {"output": X} is X; a
// LangChain ToolMessage (the output of both) is its kwargs.content. An X or
// a content that is JSON text of an object or array is parsed in turn, so
// that the household tools' JSON state reads as fields.

// callValue is the span's arguments or result, read once per evaluation.
type callValue struct {
	v          pcommon.Value
	found, set bool
}

func (ev *evaluation) call(result bool) (pcommon.Value, bool) {
	c := &ev.args
	if result {
		c = &ev.result
	}
	if !c.set {
		c.set = true
		c.v, c.found = ev.readCall(result)
	}
	return c.v, c.found
}

func (ev *evaluation) readCall(result bool) (pcommon.Value, bool) {
	f := &ev.facts
	if f.toolsNodeFailed() {
		// A LangGraph ToolNode's span, the event of a call that threw under
		// Traceloop's LangChain instrumentation: its input is the graph's
		// state and its output the node's messages, not the call's; like
		// ADK's nameless span of a tool that threw, it has neither.
		return pcommon.Value{}, false
	}
	type source struct {
		seen uint32
		v    *pcommon.Value
	}
	sources := [4]source{{seenADKArgs, &f.adkArgs}, {seenGenAIArgs, &f.genaiArgs}, {seenOIInput, &f.oiInput}, {seenTLInput, &f.tlInput}}
	if result {
		sources = [4]source{{seenADKResult, &f.adkResult}, {seenGenAIResult, &f.genaiResult}, {seenOIOutput, &f.oiOutput}, {seenTLOutput, &f.tlOutput}}
	}
	for _, s := range sources {
		if f.seen&s.seen == 0 {
			continue
		}
		v := ev.parsed(*s.v)
		switch {
		case !result && s.seen == seenTLInput:
			v = ev.unwrapArgs(v)
		case result && s.seen == seenOIOutput:
			v = ev.toolMessage(ev.unwrapOutput(v))
		case result && s.seen == seenTLOutput:
			v = ev.toolMessage(v)
		}
		return v, true
	}
	return pcommon.Value{}, false
}

// parsed is v, or the JSON it holds when it is text of an object or an
// array that parses.
func (ev *evaluation) parsed(v pcommon.Value) pcommon.Value {
	if v.Type() != pcommon.ValueTypeStr {
		return v
	}
	text := v.Str()
	t := strings.TrimLeft(text, " \t\r\n")
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return v
	}
	out, err := ev.set.memo.get(context.Background(), nil, text)
	if err != nil {
		return v
	}
	// The memo's result is shared: copy it out.
	p := pcommon.NewValueEmpty()
	switch x := out.(type) {
	case pcommon.Map:
		x.CopyTo(p.SetEmptyMap())
	case pcommon.Slice:
		x.CopyTo(p.SetEmptySlice())
	default:
		if p.FromRaw(x) != nil {
			return v
		}
	}
	return p
}

// unwrapArgs takes off Traceloop's {"args": [X]}.
func (ev *evaluation) unwrapArgs(v pcommon.Value) pcommon.Value {
	if v.Type() != pcommon.ValueTypeMap || v.Map().Len() != 1 {
		return v
	}
	a, ok := v.Map().Get("args")
	if !ok || a.Type() != pcommon.ValueTypeSlice || a.Slice().Len() != 1 {
		return v
	}
	return ev.parsed(a.Slice().At(0))
}

// unwrapOutput takes off OpenInference's {"output": X}.
func (ev *evaluation) unwrapOutput(v pcommon.Value) pcommon.Value {
	if v.Type() != pcommon.ValueTypeMap || v.Map().Len() != 1 {
		return v
	}
	if x, ok := v.Map().Get("output"); ok {
		return ev.parsed(x)
	}
	return v
}

// toolMessage is a LangChain ToolMessage's content (parsed if it is JSON of
// an object or array); any other value as it is.
func (ev *evaluation) toolMessage(v pcommon.Value) pcommon.Value {
	if v.Type() != pcommon.ValueTypeMap {
		return v
	}
	id, ok := v.Map().Get("id")
	if !ok || id.Type() != pcommon.ValueTypeSlice || id.Slice().Len() == 0 {
		return v
	}
	if last := id.Slice().At(id.Slice().Len() - 1); last.Type() != pcommon.ValueTypeStr || last.Str() != "ToolMessage" {
		return v
	}
	kw, ok := v.Map().Get("kwargs")
	if !ok || kw.Type() != pcommon.ValueTypeMap {
		return v
	}
	content, ok := kw.Map().Get("content")
	if !ok {
		return v
	}
	return ev.parsed(content)
}

// fieldSpec is what a condition asks of the call beyond its base condition:
// its args and result matchers, its captures.
type fieldSpec struct {
	args, result Fields
	captures     []Capture
	// the dict part: bindings (from captures), then comparisons (the
	// captured and contains_captured matchers), in that order in the values
	binds    []source
	compares []compare
}

type source struct {
	result bool
	path   string
}

type compare struct {
	source
	name     string
	contains bool
}

func newFieldSpec(p *Predicate) *fieldSpec {
	if len(p.Args) == 0 && len(p.Result) == 0 && len(p.Capture) == 0 {
		return nil
	}
	fs := &fieldSpec{args: p.Args, result: p.Result, captures: p.Capture}
	for _, c := range p.Capture {
		result, path, _ := splitSource(c.From)
		fs.binds = append(fs.binds, source{result, path})
	}
	for i, fields := range []Fields{p.Args, p.Result} {
		for _, f := range fields {
			if f.Kind == FieldCaptured || f.Kind == FieldContainsCaptured {
				fs.compares = append(fs.compares, compare{source{i == 1, f.Path}, f.Name, f.Kind == FieldContainsCaptured})
			}
		}
	}
	return fs
}

// dict reports whether the predicate binds or compares: a capture
// predicate, whose bit holds only its event-local part.
func (fs *fieldSpec) dict() bool { return fs != nil && len(fs.binds)+len(fs.compares) > 0 }

// match checks the static matchers and that every value the dict part
// reads is there.
func (fs *fieldSpec) match(ev *evaluation) bool {
	for i, fields := range []Fields{fs.args, fs.result} {
		if len(fields) == 0 {
			continue
		}
		call, ok := ev.call(i == 1)
		if !ok {
			return false
		}
		for j := range fields {
			v, ok := lookupIn(call, i == 1, fields[j].Path)
			if !ok || !fields[j].matchStatic(v) {
				return false
			}
		}
	}
	for _, b := range fs.binds {
		if _, ok := ev.value(b); !ok {
			return false
		}
	}
	return true
}

func (ev *evaluation) value(s source) (pcommon.Value, bool) {
	call, ok := ev.call(s.result)
	if !ok {
		return pcommon.Value{}, false
	}
	return lookupIn(call, s.result, s.path)
}

// lookupIn is lookup in a call's arguments (result false) or result. The
// arguments of a one-argument LangChain tool come bare ("London", not
// {"city": "London"}), so there a bare value is the value of any top-level
// field: `args: {city: ...}` reads the same call in every convention. A
// bare result is not: a tool's result has no named field to stand for.
func lookupIn(call pcommon.Value, result bool, path string) (pcommon.Value, bool) {
	bare := call.Type() != pcommon.ValueTypeMap && call.Type() != pcommon.ValueTypeSlice
	if !result && bare && path != "$" && !strings.Contains(path, ".") {
		return call, true
	}
	return lookup(call, path)
}

// values are the dict part's values at this span: bindings, then compared
// fields (present: match checked it).
func (fs *fieldSpec) values(ev *evaluation) []texpr.Value {
	out := make([]texpr.Value, 0, len(fs.binds)+len(fs.compares))
	for _, b := range fs.binds {
		v, _ := ev.value(b)
		out = append(out, canonical(v))
	}
	for _, c := range fs.compares {
		v, _ := ev.value(c.source)
		out = append(out, canonical(v))
	}
	return out
}

// apply is the dict part: every comparison against d, then the bindings.
// A name not bound in d compares false.
func (fs *fieldSpec) apply(vals []texpr.Value, d texpr.Dict) (bool, texpr.Dict) {
	for j, c := range fs.compares {
		v := vals[len(fs.binds)+j]
		bound, ok := d.Get(c.name)
		if !ok {
			return false, d
		}
		if !c.contains {
			if v != bound {
				return false, d
			}
			continue
		}
		s, ok1 := unquote(v)
		sub, ok2 := unquote(bound)
		if !ok1 || !ok2 || !strings.Contains(s, sub) {
			return false, d
		}
	}
	for j, c := range fs.captures {
		d = d.With(c.Name, vals[j])
	}
	return true, d
}

// Captured is what the capture predicates do at one event (texpr.Captures):
// the values each read from its span, applied to a thread's dict.
type Captured struct {
	specs []*fieldSpec    // by predicate bit; nil: not a capture predicate
	vals  [][]texpr.Value // by predicate bit, where it held
}

// Apply implements texpr.Captures.
func (c *Captured) Apply(i int, d texpr.Dict) (bool, texpr.Dict) {
	if i >= len(c.specs) || c.specs[i] == nil || c.vals[i] == nil {
		return false, d
	}
	return c.specs[i].apply(c.vals[i], d)
}

// Call is a span's call arguments (result false) or result, read and
// unwrapped as args: and result: read them, in any convention; false when
// the span has none. For tools that study what calls carry (agentguard
// abstract), not for the hot path.
func (s *Set) Call(span ptrace.Span, result bool) (pcommon.Value, bool) {
	ev := s.newEvaluation(ptrace.ResourceSpans{}, ptrace.ScopeSpans{}, span)
	defer ev.close()
	ev.facts.gather(span, false)
	return ev.call(result)
}
