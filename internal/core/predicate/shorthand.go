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
// handoff), OpenInference (openinference.span.kind TOOL) and OpenLLMetry
// (traceloop.span.kind tool). ADK's `execute_tool (merged)` span, which sits
// beside the real calls of a multi-call reply, is not an event.
const DefaultEvents = `(span.attributes["gen_ai.operation.name"] == "execute_tool"` +
	` or span.attributes["openinference.span.kind"] == "TOOL"` +
	` or span.attributes["traceloop.span.kind"] == "tool"` +
	` or span.attributes["gen_ai.operation.name"] == "handoff")` +
	` and span.attributes["gen_ai.tool.name"] != "(merged tools)"` +
	` and span.attributes["tool.name"] != "(merged tools)"`

// ToolCondition is the OTTL of {tool: name}: a call of that tool under GenAI
// semconv (gen_ai.tool.name), OpenInference (tool.name on a TOOL span) or
// OpenLLMetry (traceloop.entity.name on a tool span).
func ToolCondition(name string) string {
	return toolNamed(strconv.Quote(name))
}

func toolNamed(q string) string {
	return `span.attributes["gen_ai.tool.name"] == ` + q +
		` or (span.attributes["tool.name"] == ` + q + ` and span.attributes["openinference.span.kind"] == "TOOL")` +
		` or (span.attributes["traceloop.entity.name"] == ` + q + ` and span.attributes["traceloop.span.kind"] == "tool")`
}

// TransferCondition is the OTTL of {transfer_to: agent}, a transfer to that
// agent in any of these shapes:
//   - Google ADK: tool transfer_to_agent, target in the JSON of
//     gcp.vertex.agent.tool_call_args (or, under OpenInference, input.value)
//     as agent_name (Python ADK) or agentName (ADK for TypeScript);
//   - LangGraph supervisor, OpenAI Agents SDK: a tool named transfer_to_<agent>
//     (or LangGraph's hand-back transfer_back_to_<agent>);
//   - OpenAI Agents under OpenInference: TOOL span `handoff to <agent>` with
//     tool.name handoff_to_<agent>;
//   - OpenLLMetry: gen_ai.handoff.to_agent, or LangGraph's
//     langgraph.command.goto_node;
//   - CrewAI: tool `Delegate work to coworker` with coworker in its JSON
//     arguments (gen_ai.tool.call.arguments, input.value or
//     traceloop.entity.input).
//
// (An agent named "agent" would match every ADK transfer: its tool is
// transfer_to_agent. Write such a predicate as an OTTL condition.)
func TransferCondition(agent string) string {
	q := strconv.Quote(agent)
	alts := []string{
		adkTransfer(`span.attributes["gen_ai.tool.name"]`, `span.attributes["gcp.vertex.agent.tool_call_args"]`, q),
		adkTransfer(`span.attributes["tool.name"]`, `span.attributes["input.value"]`, q),
		toolNamed(strconv.Quote("transfer_to_" + agent)),
		toolNamed(strconv.Quote("transfer_back_to_" + agent)),
		`span.attributes["tool.name"] == ` + strconv.Quote("handoff_to_"+agent),
		`span.name == ` + strconv.Quote("handoff to "+agent),
		`span.attributes["gen_ai.handoff.to_agent"] == ` + q,
		`span.attributes["langgraph.command.goto_node"] == ` + q,
		crewDelegation(`span.attributes["gen_ai.tool.name"]`, `span.attributes["gen_ai.tool.call.arguments"]`, q),
		crewDelegation(`span.attributes["tool.name"]`, `span.attributes["input.value"]`, q),
		crewDelegation(`span.attributes["traceloop.entity.name"]`, `span.attributes["traceloop.entity.input"]`, q),
	}
	return strings.Join(alts, " or ")
}

func adkTransfer(tool, args, q string) string {
	return `(` + tool + ` == "transfer_to_agent" and ` + jsonPattern(args, `agent_?[nN]ame`, q) + `)`
}

func crewDelegation(tool, args, q string) string {
	return `(` + tool + ` == "Delegate work to coworker" and ` + jsonPattern(args, `coworker`, q) + `)`
}

// jsonPattern matches JSON text holding the field (a regexp over field
// names) with the string value of OTTL literal q. A regexp over the text
// rather than ParseJSON: OTTL's index of a missing key is an error, not nil,
// so a ParseJSON version needs a guard per key, and IsMatch measured about
// twice as fast (BenchmarkJSONField). It assumes the value is not
// \u-escaped, which holds for agent names. (Compile runs the native
// jsonField in its place; see native.go.)
func jsonPattern(args, field, q string) string {
	value, _ := strconv.Unquote(q)
	pattern := `"` + field + `"\s*:\s*"` + regexp.QuoteMeta(value) + `"`
	return `IsMatch(` + args + `, ` + strconv.Quote(pattern) + `)`
}

// OTTL is the condition a stateless predicate compiles to; a latched one has
// none of its own (see its Set and Reset).
func (p *Predicate) OTTL() string {
	switch {
	case p.Tool != "":
		return ToolCondition(p.Tool)
	case p.TransferTo != "":
		return TransferCondition(p.TransferTo)
	}
	return p.Condition
}
