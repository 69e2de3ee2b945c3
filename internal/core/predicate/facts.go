package predicate

import (
	"encoding/json"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// spanFacts are the attributes the shorthands and the default events
// condition read, gathered in one pass over a span's attributes so that a
// dozen shorthand alternatives cost string comparisons, not a dozen OTTL
// lookups each. Equality facts hold a value only when the attribute is a
// string, as OTTL's == does; JSON-bearing facts keep the value, read as
// OTTL's IsMatch reads it (see text).
type spanFacts struct {
	name                                  string
	opName, genaiTool, oiKind, oiTool     string
	tlKind, tlEntity, handoffTo, gotoNode string
	adkArgs, oiInput, genaiArgs, tlInput  pcommon.Value
	seen                                  uint32 // keys already taken: the first of duplicate keys wins, as Map.Get
}

// The bits of spanFacts.seen, one per key read.
const (
	seenOpName uint32 = 1 << iota
	seenGenAITool
	seenOIKind
	seenOITool
	seenTLKind
	seenTLEntity
	seenHandoffTo
	seenGotoNode
	seenADKArgs
	seenOIInput
	seenGenAIArgs
	seenTLInput
)

// gather reads the span's attributes once. A switch on the key, not a map:
// it compiles to length-then-content comparisons, with no hashing.
func (f *spanFacts) gather(span ptrace.Span) {
	*f = spanFacts{name: span.Name()}
	for k, v := range span.Attributes().All() {
		switch k {
		case "gen_ai.operation.name":
			f.str(&f.opName, seenOpName, v)
		case "gen_ai.tool.name":
			f.str(&f.genaiTool, seenGenAITool, v)
		case "openinference.span.kind":
			f.str(&f.oiKind, seenOIKind, v)
		case "tool.name":
			f.str(&f.oiTool, seenOITool, v)
		case "traceloop.span.kind":
			f.str(&f.tlKind, seenTLKind, v)
		case "traceloop.entity.name":
			f.str(&f.tlEntity, seenTLEntity, v)
		case "gen_ai.handoff.to_agent":
			f.str(&f.handoffTo, seenHandoffTo, v)
		case "langgraph.command.goto_node":
			f.str(&f.gotoNode, seenGotoNode, v)
		case "gcp.vertex.agent.tool_call_args":
			f.value(&f.adkArgs, seenADKArgs, v)
		case "input.value":
			f.value(&f.oiInput, seenOIInput, v)
		case "gen_ai.tool.call.arguments":
			f.value(&f.genaiArgs, seenGenAIArgs, v)
		case "traceloop.entity.input":
			f.value(&f.tlInput, seenTLInput, v)
		}
	}
}

// str takes a string fact; a value of another type reads as "", which no
// shorthand compares with.
func (f *spanFacts) str(dst *string, seen uint32, v pcommon.Value) {
	if f.seen&seen != 0 {
		return
	}
	f.seen |= seen
	if v.Type() == pcommon.ValueTypeStr {
		*dst = v.Str()
	}
}

func (f *spanFacts) value(dst *pcommon.Value, seen uint32, v pcommon.Value) {
	if f.seen&seen != 0 {
		return
	}
	f.seen |= seen
	*dst = v
}

// text is the JSON-bearing attribute of that seen bit, as IsMatch reads it;
// "" when absent (IsMatch of nil is false, and "" matches no pattern here).
func (f *spanFacts) text(seen uint32) string {
	if f.seen&seen == 0 {
		return ""
	}
	switch seen {
	case seenADKArgs:
		return text(f.adkArgs)
	case seenOIInput:
		return text(f.oiInput)
	case seenGenAIArgs:
		return text(f.genaiArgs)
	}
	return text(f.tlInput)
}

// text is a value as OTTL's IsMatch sees it (a StringLikeGetter), as far as
// a pattern of quoted JSON text can tell: strings as they are, maps and
// slices as JSON; numbers, booleans and bytes (hex) never hold a quote, so
// they read as "".
func text(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return v.Str()
	case pcommon.ValueTypeMap, pcommon.ValueTypeSlice:
		raw, err := json.Marshal(v.AsRaw())
		if err != nil {
			return ""
		}
		return string(raw)
	}
	return ""
}
