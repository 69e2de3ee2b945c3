// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Describe says in a few words what a span was, for the events an
// explanation lists: `greeting_agent takes control`, `transfer to
// greeting_agent`, `handoff to weather_agent`, `delegation to
// farewell_agent`, `tool say_hello`, with ` (failed)` after a call that
// failed (FailedCondition); any other span by its name. It reads the
// conventions the shorthands read, the same way (what it calls `tool X`,
// {tool: X} matches; `transfer to X`, {transfer_to: X} or, failed,
// {transfer_to: X, failed: true}; `X takes control`, {agent: X}), and needs
// no configuration. It allocates only the string it returns (and, for a
// JSON attribute held as a map rather than as text, that JSON).
//
// Where a meter held (a budget crossed, a call repeated), what it says
// follows in parentheses.
func Describe(span ptrace.Span) string {
	what := describeSpan(span)
	if note, ok := span.Attributes().Get(MeterNoteAttribute); ok && note.Str() != "" {
		return what + " (" + note.Str() + ")"
	}
	return what
}

func describeSpan(span ptrace.Span) string {
	var f spanFacts
	f.gather(span, true)
	if agent, ok := f.controlOf(); ok {
		return agent + " takes control"
	}
	failed := ""
	if f.failed() {
		failed = " (failed)"
	}
	if what, to, ok := f.transferOf(); ok {
		return what + " to " + to + failed
	}
	if tool, ok := f.toolOf(); ok {
		return "tool " + tool + failed
	}
	return span.Name()
}

// controlOf is the agent taking control at the span, as AgentCondition
// reads it.
func (f *spanFacts) controlOf() (string, bool) {
	a := &f.agent
	switch {
	case a.provider == langchain:
	case f.opName == "invoke_agent" && a.genaiAgent != "":
		return a.genaiAgent, true
	case strings.HasPrefix(f.name, "invoke_agent ") && len(f.name) > len("invoke_agent "):
		return f.name[len("invoke_agent "):], true
	}
	switch {
	case f.oiKind != "AGENT":
	case a.oiAgent != "":
		return a.oiAgent, true
	case a.oiNode != "":
		return a.oiNode, true
	case f.name != "":
		return f.name, true
	}
	if f.name == graphStart {
		if agent, ok := runStarter(f.text(seenMetadata)); ok {
			return agent, true
		}
	}
	if f.tlKind == "agent" && f.tlEntity != "" {
		return f.tlEntity, true
	}
	return "", false
}

// transferOf is the kind of transfer ("transfer", "handoff", "delegation")
// at the span and its target, as transferAlternatives reads them.
func (f *spanFacts) transferOf() (what, to string, ok bool) {
	if f.genaiTool == adkTransferTool {
		if to, ok := fieldString(f.text(seenADKArgs), agentFields); ok {
			return "transfer", to, true
		}
	}
	if f.oiTool == adkTransferTool {
		if to, ok := fieldString(f.text(seenOIInput), agentFields); ok {
			return "transfer", to, true
		}
	}
	for _, c := range []struct {
		tool string
		args uint32
	}{{f.genaiTool, seenGenAIArgs}, {f.oiTool, seenOIInput}, {f.tlEntity, seenTLInput}} {
		if c.tool == delegate {
			if to, ok := fieldString(f.text(c.args), coworkerField); ok {
				return "delegation", to, true
			}
		}
	}
	switch {
	case f.handoffTo != "":
		return "handoff", f.handoffTo, true
	case strings.HasPrefix(f.oiTool, "handoff_to_") && len(f.oiTool) > len("handoff_to_"):
		return "handoff", f.oiTool[len("handoff_to_"):], true
	case strings.HasPrefix(f.name, "handoff to ") && len(f.name) > len("handoff to "):
		return "handoff", f.name[len("handoff to "):], true
	case f.gotoNode != "":
		return "transfer", f.gotoNode, true
	}
	if f.opName == "execute_tool" {
		if to, ok := commandTarget(f.text(seenTLOutput)); ok {
			return "transfer", to, true
		}
	}
	if tool, ok := f.toolOf(); ok && tool != adkTransferTool {
		for _, prefix := range []string{"transfer_to_", "transfer_back_to_"} {
			if to, ok := strings.CutPrefix(tool, prefix); ok && to != "" {
				return "transfer", to, true
			}
		}
	}
	return "", "", false
}

// adkTransferTool is Google ADK's transfer tool, whose target is in its
// arguments, not its name.
const adkTransferTool = "transfer_to_agent"

// toolOf is the tool called at the span, as toolNamed reads it; ADK's
// merged span is no call of its own.
func (f *spanFacts) toolOf() (string, bool) {
	switch {
	case f.genaiTool == merged || f.oiTool == merged || f.name == mergedSpan:
		return "", false
	case f.genaiTool != "":
		return f.genaiTool, true
	case f.oiTool != "" && f.oiKind == "TOOL":
		return f.oiTool, true
	case f.tlEntity != "" && f.tlKind == "tool":
		return f.tlEntity, true
	}
	if f.opName == "execute_tool" {
		if tool, ok := toolMessageName(f.text(seenTLOutput)); ok {
			return tool, true
		}
	}
	if f.toolsNodeFailed() {
		if tool, ok := failedToolMessageName(f.text(seenTLOutput)); ok {
			return tool, true
		}
	}
	if tool, ok := strings.CutPrefix(f.name, execPrefix); ok && tool != "" && f.seen&seenGenAITool == 0 {
		return tool, true
	}
	return "", false
}
