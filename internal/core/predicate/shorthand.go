// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"regexp"
	"strconv"
	"strings"
)

// The shorthands are defined as plain OTTL, so that what a predicate matches
// can be read (in the docs, in debug logs) and tried in a transform
// processor. Compile parses that OTTL, then runs a native matcher of the same
// meaning (native.go; the tests check they agree), which measured ten times
// faster: about 0.2 µs per span for the paper's predicates against 2 µs.
// `and` and `or` short-circuit in OTTL, so each alternative tests a cheap
// attribute equality first and reads JSON text only on the spans that pass it.

// DefaultEvents selects tool-call and handoff spans in every convention
// agentguard knows: GenAI semconv (gen_ai.operation.name execute_tool or
// handoff, or a span named `execute_tool <tool>`: ADK for TypeScript ends
// the span of a tool that threw with its name alone), OpenInference
// (openinference.span.kind TOOL) and OpenLLMetry (traceloop.span.kind tool).
// ADK's `execute_tool (merged)` span, which sits beside the real calls of a
// multi-call reply, is not an event.
//
// Traceloop's LangChain JS instrumentation names a tool only in the
// ToolMessage of its result; a tool that throws has none, so its span
// (traceloop.span.kind task, status ERROR, no traceloop.entity.output)
// names no tool. LangGraph's ToolNode turns the error into a ToolMessage of
// status error that does name it, in the output of the node's own span: that
// span is the failed call's event, and the nameless one is not (two events
// for one call would break `>>`).
var DefaultEvents = `((span.attributes["gen_ai.operation.name"] == "execute_tool"` +
	` or span.attributes["openinference.span.kind"] == "TOOL"` +
	` or span.attributes["traceloop.span.kind"] == "tool"` +
	` or span.attributes["gen_ai.operation.name"] == "handoff"` +
	` or HasPrefix(span.name, "execute_tool "))` +
	` and span.attributes["gen_ai.tool.name"] != "(merged tools)"` +
	` and span.attributes["tool.name"] != "(merged tools)"` +
	` and span.name != "execute_tool (merged)"` +
	` and not ` + namelessFailedTool + `)` +
	` or ` + toolsNodeFailed

// namelessFailedTool is the span Traceloop's LangChain JS instrumentation
// leaves of a tool that threw: its result, the only place it names the tool,
// never came.
const namelessFailedTool = `(span.attributes["traceloop.span.kind"] == "task"` +
	` and span.status.code == STATUS_CODE_ERROR and span.attributes["traceloop.entity.output"] == nil)`

// toolsNodeFailed is the span of a LangGraph ToolNode, under Traceloop's
// LangChain JS instrumentation, some of whose calls failed: its output is
// the node's new messages, ToolMessages, one of status error.
var toolsNodeFailed = `(span.attributes["traceloop.span.kind"] == "workflow" and ` +
	isMatch(`span.attributes["traceloop.entity.output"]`, `^`+regexp.QuoteMeta(toolsNodeOutputPrefix)) + ` and ` +
	isMatch(`span.attributes["traceloop.entity.output"]`, regexp.QuoteMeta(failedToolMessage)) + `)`

// FailedCondition is what `failed: true` adds to a tool or transfer
// predicate: the span ended with status ERROR; or it is the span ADK for
// TypeScript ends when a tool throws: named `execute_tool <tool>`, with no
// attribute at all (and status UNSET); or it carries GenAI's error.type,
// which the semantic conventions set where the operation ended in an error
// (ADK records a tool's failure there); or it is the span of a LangGraph
// ToolNode that reports a failed call (see DefaultEvents).
var FailedCondition = `(span.status.code == STATUS_CODE_ERROR` +
	` or (HasPrefix(span.name, "execute_tool ") and Len(span.attributes) == 0)` +
	` or (span.attributes["error.type"] != nil and span.attributes["error.type"] != "")` +
	` or ` + toolsNodeFailed + `)`

// ToolCondition is the OTTL of {tool: name}: a call of that tool, failed or
// not, under GenAI semconv (gen_ai.tool.name, or without it the span name
// `execute_tool <name>`), OpenInference (tool.name on a TOOL span) or
// OpenLLMetry (traceloop.entity.name on a tool span; or, from its LangChain
// JS instrumentation, whose tool spans all read `execute_tool
// DynamicStructuredTool`, the name in the ToolMessage JSON of
// traceloop.entity.output; for a call that threw, the name in the ToolMessage
// of status error its LangGraph ToolNode's span outputs).
func ToolCondition(name string) string {
	if IsGlob(name) {
		return toolMatching(name)
	}
	return toolNamed(name)
}

// IsGlob reports whether a tool name is a glob: `*` matches any run of
// characters, `?` any one (`admin_*`, `get_*_report`).
func IsGlob(name string) bool { return strings.ContainsAny(name, "*?") }

// globPattern is the RE2 text a glob's characters match, unanchored; char
// is what one character of `*` or `?` may be.
func globPattern(glob, char string) string {
	var b strings.Builder
	for _, r := range glob {
		switch r {
		case '*':
			b.WriteString(char + `*`)
		case '?':
			b.WriteString(char)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return b.String()
}

// toolMatching is toolNamed for a glob: each equality an anchored match.
func toolMatching(glob string) string {
	g := globPattern(glob, `.`)
	whole := `^` + g + `$`
	return isMatch(`span.attributes["gen_ai.tool.name"]`, whole) +
		` or (` + isMatch(`span.attributes["tool.name"]`, whole) + ` and span.attributes["openinference.span.kind"] == "TOOL")` +
		` or (` + isMatch(`span.attributes["traceloop.entity.name"]`, whole) + ` and span.attributes["traceloop.span.kind"] == "tool")` +
		` or (` + isMatch(`span.name`, `^execute_tool `+g+`$`) + ` and span.attributes["gen_ai.tool.name"] == nil)` +
		` or (span.attributes["gen_ai.operation.name"] == "execute_tool" and ` +
		isMatch(`span.attributes["traceloop.entity.output"]`,
			`^`+regexp.QuoteMeta(toolMessagePrefix)+`(?s:.*)"name"\s*:\s*"`+globPattern(glob, `[^"]`)+`"`) + `)` +
		` or (` + toolsNodeFailed + ` and ` + isMatch(`span.attributes["traceloop.entity.output"]`,
		failedToolMessagePattern(globPattern(glob, `[^"]`))) + `)`
}

func toolNamed(name string) string {
	q := strconv.Quote(name)
	return `span.attributes["gen_ai.tool.name"] == ` + q +
		` or (span.attributes["tool.name"] == ` + q + ` and span.attributes["openinference.span.kind"] == "TOOL")` +
		` or (span.attributes["traceloop.entity.name"] == ` + q + ` and span.attributes["traceloop.span.kind"] == "tool")` +
		` or (span.name == ` + strconv.Quote("execute_tool "+name) + ` and span.attributes["gen_ai.tool.name"] == nil)` +
		` or (span.attributes["gen_ai.operation.name"] == "execute_tool" and ` +
		isMatch(`span.attributes["traceloop.entity.output"]`,
			`^`+regexp.QuoteMeta(toolMessagePrefix)+`(?s:.*)"name"\s*:\s*"`+regexp.QuoteMeta(name)+`"`) + `)` +
		` or (` + toolsNodeFailed + ` and ` + isMatch(`span.attributes["traceloop.entity.output"]`,
		failedToolMessagePattern(regexp.QuoteMeta(name))) + `)`
}

// failedToolMessagePattern matches a ToolMessage of status error, as
// LangGraph's ToolNode makes one of a tool that threw (status, content, name,
// in that order), naming a tool the pattern name matches: the content is a
// JSON string, read to its closing quote, so that the name is this
// message's own.
func failedToolMessagePattern(name string) string {
	return regexp.QuoteMeta(failedToolMessage) + `(?:[^"\\]|(?s:\\.))*","name":"` + name + `"`
}

// TransferCondition is the OTTL of {transfer_to: agent}: a transfer to that
// agent that did not fail (a failed transfer moved no control; see
// FailedCondition), in any of these shapes:
//   - Google ADK: tool transfer_to_agent, target in the JSON of
//     gcp.vertex.agent.tool_call_args (or, under OpenInference, input.value)
//     as agent_name (Python ADK) or agentName (ADK for TypeScript);
//   - LangGraph supervisor, OpenAI Agents SDK: a tool named transfer_to_<agent>
//     (or LangGraph's hand-back transfer_back_to_<agent>);
//   - OpenAI Agents under OpenInference: TOOL span `handoff to <agent>` with
//     tool.name handoff_to_<agent>;
//   - OpenLLMetry: gen_ai.handoff.to_agent, or LangGraph's
//     langgraph.command.goto_node; from its LangChain JS instrumentation, a
//     tool whose result (traceloop.entity.output) is a LangGraph Command
//     whose goto is the agent alone;
//   - CrewAI: tool `Delegate work to coworker` with coworker in its JSON
//     arguments (gen_ai.tool.call.arguments, input.value or
//     traceloop.entity.input).
//
// (An agent named "agent" would match every ADK transfer: its tool is
// transfer_to_agent. Write such a predicate as an OTTL condition.)
func TransferCondition(agent string) string {
	return `(` + transferAlternatives(agent) + `) and not ` + FailedCondition
}

func transferAlternatives(agent string) string {
	alts := []string{
		adkTransfer(`span.attributes["gen_ai.tool.name"]`, `span.attributes["gcp.vertex.agent.tool_call_args"]`, agent),
		adkTransfer(`span.attributes["tool.name"]`, `span.attributes["input.value"]`, agent),
		ToolCondition("transfer_to_" + agent),
		ToolCondition("transfer_back_to_" + agent),
		nameIs(`span.attributes["tool.name"]`, "handoff_to_"+agent),
		nameIs(`span.name`, "handoff to "+agent),
		nameIs(`span.attributes["gen_ai.handoff.to_agent"]`, agent),
		nameIs(`span.attributes["langgraph.command.goto_node"]`, agent),
		`(span.attributes["gen_ai.operation.name"] == "execute_tool" and ` +
			isMatch(`span.attributes["traceloop.entity.output"]`,
				`"goto"\s*:\s*(?:\[\s*"`+namePattern(agent, `[^"]`)+`"\s*\]|"`+namePattern(agent, `[^"]`)+`")\s*\}\s*$`) + `)`,
		crewDelegation(`span.attributes["gen_ai.tool.name"]`, `span.attributes["gen_ai.tool.call.arguments"]`, agent),
		crewDelegation(`span.attributes["tool.name"]`, `span.attributes["input.value"]`, agent),
		crewDelegation(`span.attributes["traceloop.entity.name"]`, `span.attributes["traceloop.entity.input"]`, agent),
	}
	return strings.Join(alts, " or ")
}

// nameIs is target equal to name, or for a glob name, wholly matching it.
func nameIs(target, name string) string {
	if IsGlob(name) {
		return isMatch(target, `^`+globPattern(name, `.`)+`$`)
	}
	return target + ` == ` + strconv.Quote(name)
}

// namePattern is the RE2 text of a name inside a larger pattern: the name
// quoted, or for a glob, its pattern with each wildcard character one of
// char.
func namePattern(name, char string) string {
	if IsGlob(name) {
		return globPattern(name, char)
	}
	return regexp.QuoteMeta(name)
}

func adkTransfer(tool, args, agent string) string {
	return `(` + tool + ` == "transfer_to_agent" and ` + jsonPattern(args, `agent_?[nN]ame`, agent) + `)`
}

func crewDelegation(tool, args, agent string) string {
	return `(` + tool + ` == "Delegate work to coworker" and ` + jsonPattern(args, `coworker`, agent) + `)`
}

// AgentCondition is the OTTL of {agent: name}: that agent takes control,
// that is a run of it starts. One span per run, in each convention:
//   - GenAI semconv (Google ADK, ...): the `invoke_agent <name>` span
//     (gen_ai.operation.name invoke_agent and gen_ai.agent.name, or the span
//     name alone). Not from Traceloop's LangChain instrumentation
//     (gen_ai.provider.name langchain), which calls every chain whose name
//     holds "agent" invoke_agent and shows a LangGraph agent's run twice,
//     nested, with nothing to tell the two apart;
//   - OpenInference AGENT spans (OpenAI Agents: one per activation, named
//     after the agent, graph.node.id; agent.name where set);
//   - LangGraph under OpenInference: the agent's graph starting, that is
//     its `__start__` task, whose checkpoint namespace
//     (langgraph_checkpoint_ns in the metadata JSON) ends
//     `<name>:<task>|__start__:<task>`. The node spans themselves are no
//     use: LangGraph JS shows a subgraph node twice, nested and identical,
//     and every span inside a node carries the node's langgraph_node; the
//     __start__ task runs once per run, before anything else in it. (A node
//     that is a plain function, not a graph, has no __start__: write an OTTL
//     condition on its span.)
//   - OpenLLMetry: traceloop.span.kind agent with traceloop.entity.name.
func AgentCondition(agent string) string {
	return `(((span.attributes["gen_ai.operation.name"] == "invoke_agent" and ` + nameIs(`span.attributes["gen_ai.agent.name"]`, agent) + `)` +
		` or ` + nameIs(`span.name`, "invoke_agent "+agent) + `)` +
		` and span.attributes["gen_ai.provider.name"] != "langchain")` +
		` or (span.attributes["openinference.span.kind"] == "AGENT" and (` + nameIs(`span.name`, agent) +
		` or ` + nameIs(`span.attributes["graph.node.id"]`, agent) + ` or ` + nameIs(`span.attributes["agent.name"]`, agent) + `))` +
		` or (span.name == "__start__" and ` +
		isMatch(`span.attributes["metadata"]`,
			`"langgraph_checkpoint_ns"\s*:\s*"(?:[^"|]*\|)*`+namePattern(agent, `[^"|:]`)+`:[^"|]*\|__start__:[^"|]*"`) + `)` +
		` or (span.attributes["traceloop.span.kind"] == "agent" and ` + nameIs(`span.attributes["traceloop.entity.name"]`, agent) + `)`
}

// jsonPattern matches JSON text holding the field (a regexp over field
// names) with the string value of OTTL literal q. A regexp over the text
// rather than ParseJSON: OTTL's index of a missing key is an error, not nil,
// so a ParseJSON version needs a guard per key, and IsMatch measured about
// twice as fast (BenchmarkJSONField). It assumes the value is not
// \u-escaped, which holds for agent names. (Compile runs the native
// jsonField in its place; see native.go.)
func jsonPattern(args, field, value string) string {
	return isMatch(args, `"`+field+`"\s*:\s*"`+namePattern(value, `[^"]`)+`"`)
}

func isMatch(target, pattern string) string {
	return `IsMatch(` + target + `, ` + strconv.Quote(pattern) + `)`
}

// OTTL is the condition a stateless predicate compiles to; a latched one has
// none of its own (see its Set and Reset).
func (p *Predicate) OTTL() string {
	switch {
	case p.Tool != "" && p.Failed == nil:
		return ToolCondition(p.Tool)
	case p.Tool != "":
		return `(` + ToolCondition(p.Tool) + `) and ` + outcomeOTTL(*p.Failed)
	case p.TransferTo != "" && p.Failed != nil && *p.Failed:
		return `(` + transferAlternatives(p.TransferTo) + `) and ` + FailedCondition
	case p.TransferTo != "":
		return TransferCondition(p.TransferTo)
	case p.Agent != "":
		return AgentCondition(p.Agent)
	case p.Allowlist != nil:
		return p.Allowlist.ottl()
	}
	return p.Condition
}

func outcomeOTTL(failed bool) string {
	if failed {
		return FailedCondition
	}
	return "not " + FailedCondition
}
