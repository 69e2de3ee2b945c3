// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"encoding/json"
	"strings"

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
	tlOutput                              pcommon.Value
	adkResult, genaiResult, oiOutput      pcommon.Value // read by result matchers only
	errorType                             pcommon.Value // GenAI's failure marker (FailedCondition)
	// The tool a span names in each convention, derived once (toolNamed
	// compares with them): tool.name on a TOOL span, traceloop.entity.name on
	// a tool span, the span name `execute_tool <tool>` without
	// gen_ai.tool.name; "" for none (no tool predicate names "").
	oiToolName, tlToolName, execToolName string
	seen                                 uint32      // keys already taken: the first of duplicate keys wins, as Map.Get
	span                                 ptrace.Span // for what few matchers read: its status, its attribute count
	// agent holds the keys only agent predicates and Describe read; gather
	// reads them only when asked to, so that configurations without agent
	// predicates do not pay for those keys.
	agent agentFacts
}

type agentFacts struct {
	genaiAgent, provider, oiNode, oiAgent string
	metadata                              pcommon.Value
	ns                                    namespaces // in metadata, on a __start__ span
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
	seenTLOutput
	seenGenAIAgent
	seenProvider
	seenOINode
	seenOIAgent
	seenMetadata
	seenADKResult
	seenGenAIResult
	seenOIOutput
	seenErrorType
)

// gather reads the span's attributes into f, which must be zero (a fresh
// evaluation's: zeroing it again here measured as a cost), once; with
// agents, also the keys only agent predicates read. A switch on the key,
// not a map: it compiles to length-then-content comparisons, with no
// hashing.
func (f *spanFacts) gather(span ptrace.Span, agents bool) {
	f.name, f.span = span.Name(), span
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
		case "traceloop.entity.output":
			f.value(&f.tlOutput, seenTLOutput, v)
		case "gcp.vertex.agent.tool_response":
			f.value(&f.adkResult, seenADKResult, v)
		case "gen_ai.tool.call.result":
			f.value(&f.genaiResult, seenGenAIResult, v)
		case "output.value":
			f.value(&f.oiOutput, seenOIOutput, v)
		case "error.type":
			f.value(&f.errorType, seenErrorType, v)
		default:
			if agents {
				f.agentFact(k, v)
			}
		}
	}
	if f.oiKind == "TOOL" {
		f.oiToolName = f.oiTool
	}
	if f.tlKind == "tool" {
		f.tlToolName = f.tlEntity
	}
	if f.seen&seenGenAITool == 0 && strings.HasPrefix(f.name, execPrefix) {
		f.execToolName = f.name[len(execPrefix):]
	}
	if agents && f.name == graphStart && f.seen&seenMetadata != 0 {
		f.agent.ns = findNamespaces(text(f.agent.metadata))
	}
}

func (f *spanFacts) agentFact(k string, v pcommon.Value) {
	a := &f.agent
	switch k {
	case "gen_ai.agent.name":
		f.str(&a.genaiAgent, seenGenAIAgent, v)
	case "gen_ai.provider.name":
		f.str(&a.provider, seenProvider, v)
	case "graph.node.id":
		f.str(&a.oiNode, seenOINode, v)
	case "agent.name":
		f.str(&a.oiAgent, seenOIAgent, v)
	case "metadata":
		f.value(&a.metadata, seenMetadata, v)
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
	case seenTLOutput:
		return text(f.tlOutput)
	case seenMetadata:
		return text(f.agent.metadata)
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
