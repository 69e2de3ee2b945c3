// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Native matchers run the shorthands and the default events condition
// without OTTL's per-lookup cost. Each mirrors, alternative for alternative,
// the OTTL that shorthand.go generates, which stays the documented meaning
// and is parsed at Compile; native_test.go checks the two agree on every
// fixture span, hand-built span and fuzzed span.

// native is a shorthand's matcher: a kind and the names it compares with,
// prepared at Compile. A struct and a switch rather than closures, so that
// a span's facts stay on the stack.
type native struct {
	kind    nativeKind
	outcome outcome
	name    string // the tool, or the agent
	// to and back are the LangGraph transfer tools to the agent, handoffTool
	// and handoff the OpenAI Agents handoff tool and span name; invoke is the
	// agent's invoke_agent span name, nsAgent its checkpoint namespace
	// segment's prefix.
	to, back, handoffTool, handoff, invoke, nsAgent string
}

type nativeKind int

const (
	nativeEvents nativeKind = iota
	nativeTool
	nativeTransfer
	nativeAgent
)

// outcome is what a tool or transfer predicate asks of a call's outcome.
type outcome uint8

const (
	anyOutcome outcome = iota
	onlyFailed
	notFailed
)

// outcomeOf is the outcome a tool (transfer false) or transfer (true)
// predicate with that failed setting keeps.
func outcomeOf(failed *bool, transfer bool) outcome {
	switch {
	case failed != nil && *failed:
		return onlyFailed
	case failed != nil || transfer:
		return notFailed
	}
	return anyOutcome
}

const merged = "(merged tools)"

func toolMatcher(name string, failed *bool) *native {
	return &native{kind: nativeTool, outcome: outcomeOf(failed, false), name: name}
}

func transferMatcher(agent string, failed *bool) *native {
	return &native{kind: nativeTransfer, outcome: outcomeOf(failed, true), name: agent,
		to: "transfer_to_" + agent, back: "transfer_back_to_" + agent,
		handoffTool: "handoff_to_" + agent, handoff: "handoff to " + agent}
}

func agentMatcher(agent string) *native {
	return &native{kind: nativeAgent, name: agent, invoke: "invoke_agent " + agent, nsAgent: agent + ":"}
}

var defaultEventsMatcher = &native{kind: nativeEvents}

func (n *native) match(f *spanFacts) bool {
	switch n.kind {
	case nativeTool:
		return (f.toolNamed(n.name) || f.toolMessageNamed(n.name) || f.failedCallNamed(n.name)) && n.outcomeHolds(f)
	case nativeTransfer:
		return n.transfer(f) && n.outcomeHolds(f)
	case nativeAgent:
		return n.agent(f)
	}
	return ((f.opName == "execute_tool" || f.oiKind == "TOOL" || f.tlKind == "tool" || f.opName == "handoff" ||
		strings.HasPrefix(f.name, execPrefix)) &&
		f.genaiTool != merged && f.oiTool != merged && f.name != mergedSpan && !f.namelessFailedTool()) ||
		f.toolsNodeFailed()
}

// namelessFailedTool mirrors the OTTL of namelessFailedTool (shorthand.go).
func (f *spanFacts) namelessFailedTool() bool {
	return f.tlKind == "task" && f.span.Status().Code() == ptrace.StatusCodeError &&
		(f.seen&seenTLOutput == 0 || f.tlOutput.Type() == pcommon.ValueTypeEmpty)
}

// toolsNodeFailed mirrors the OTTL of toolsNodeFailed (shorthand.go).
func (f *spanFacts) toolsNodeFailed() bool {
	if f.tlKind != "workflow" || f.seen&seenTLOutput == 0 {
		return false
	}
	s := text(f.tlOutput)
	return strings.HasPrefix(s, toolsNodeOutputPrefix) && strings.Contains(s, failedToolMessage)
}

// failedCallNamed: the span is a ToolNode's that reports a failed call of
// the tool (toolNamed's last alternative).
func (f *spanFacts) failedCallNamed(tool string) bool {
	return f.toolsNodeFailed() && failedToolMessageNamed(text(f.tlOutput), tool)
}

const (
	execPrefix = "execute_tool "
	mergedSpan = "execute_tool (merged)"
)

func (n *native) outcomeHolds(f *spanFacts) bool {
	switch n.outcome {
	case onlyFailed:
		return f.failed()
	case notFailed:
		return !f.failed()
	}
	return true
}

// failed mirrors FailedCondition.
func (f *spanFacts) failed() bool {
	return f.span.Status().Code() == ptrace.StatusCodeError ||
		(strings.HasPrefix(f.name, execPrefix) && f.span.Attributes().Len() == 0) ||
		(f.seen&seenErrorType != 0 && f.errorType.Type() != pcommon.ValueTypeEmpty &&
			(f.errorType.Type() != pcommon.ValueTypeStr || f.errorType.Str() != "")) ||
		f.toolsNodeFailed()
}

// toolNamed and toolMessageNamed together mirror toolNamed in
// shorthand.go: the names gather derived, small enough to inline (this runs
// for every tool and transfer predicate at every event), and the
// ToolMessage of Traceloop's LangChain instrumentation.
func (f *spanFacts) toolNamed(tool string) bool {
	return f.genaiTool == tool || f.oiToolName == tool || f.tlToolName == tool || f.execToolName == tool
}

func (f *spanFacts) toolMessageNamed(tool string) bool {
	return f.seen&seenTLOutput != 0 && f.readToolMessage(tool)
}

func (f *spanFacts) readToolMessage(tool string) bool {
	return f.opName == "execute_tool" && toolMessageNamed(text(f.tlOutput), tool)
}

// transfer mirrors transferAlternatives, alternative for alternative.
func (n *native) transfer(f *spanFacts) bool {
	agent := n.name
	return (f.genaiTool == "transfer_to_agent" && jsonField(f.text(seenADKArgs), agentFields, agent)) ||
		(f.oiTool == "transfer_to_agent" && jsonField(f.text(seenOIInput), agentFields, agent)) ||
		f.toolNamed(n.to) || f.toolNamed(n.back) || f.toolMessageNamed(n.to) || f.toolMessageNamed(n.back) ||
		f.failedCallNamed(n.to) || f.failedCallNamed(n.back) ||
		f.oiTool == n.handoffTool || f.name == n.handoff || f.handoffTo == agent || f.gotoNode == agent ||
		(f.seen&seenTLOutput != 0 && f.opName == "execute_tool" && commandGoesTo(f.text(seenTLOutput), agent)) ||
		(f.genaiTool == delegate && jsonField(f.text(seenGenAIArgs), coworkerField, agent)) ||
		(f.oiTool == delegate && jsonField(f.text(seenOIInput), coworkerField, agent)) ||
		(f.tlEntity == delegate && jsonField(f.text(seenTLInput), coworkerField, agent))
}

// agent mirrors AgentCondition, alternative for alternative.
func (n *native) agent(f *spanFacts) bool {
	a := &f.agent
	return (((f.opName == "invoke_agent" && a.genaiAgent == n.name) || f.name == n.invoke) && a.provider != langchain) ||
		(f.oiKind == "AGENT" && (f.name == n.name || a.oiNode == n.name || a.oiAgent == n.name)) ||
		(f.name == graphStart && a.ns.found && a.ns.startsRun(text(a.metadata), n.nsAgent)) ||
		(f.tlKind == "agent" && f.tlEntity == n.name)
}

const (
	delegate   = "Delegate work to coworker"
	langchain  = "langchain"
	graphStart = "__start__"
)
