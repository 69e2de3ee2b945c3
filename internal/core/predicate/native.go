package predicate

import "strings"

// Native matchers run the shorthands and the default events condition
// without OTTL's per-lookup cost. Each mirrors, alternative for alternative,
// the OTTL that shorthand.go generates, which stays the documented meaning
// and is parsed at Compile; native_test.go checks the two agree on every
// fixture span, hand-built span and fuzzed span.

// native is a shorthand's matcher: a kind and the names it compares with,
// prepared at Compile. A struct and a switch rather than closures, so that
// a span's facts stay on the stack.
type native struct {
	kind                           nativeKind
	name                           string // the tool, or the agent
	to, back, handoffTool, handoff string // the transfer tools and span name of the agent
}

type nativeKind int

const (
	nativeEvents nativeKind = iota
	nativeTool
	nativeTransfer
)

const merged = "(merged tools)"

func toolMatcher(name string) *native { return &native{kind: nativeTool, name: name} }

func transferMatcher(agent string) *native {
	return &native{kind: nativeTransfer, name: agent, to: "transfer_to_" + agent, back: "transfer_back_to_" + agent,
		handoffTool: "handoff_to_" + agent, handoff: "handoff to " + agent}
}

var defaultEventsMatcher = &native{kind: nativeEvents}

func (n *native) match(f *spanFacts) bool {
	switch n.kind {
	case nativeTool:
		return f.toolNamed(n.name)
	case nativeTransfer:
		return n.transfer(f)
	}
	return (f.opName == "execute_tool" || f.oiKind == "TOOL" || f.tlKind == "tool" || f.opName == "handoff") &&
		f.genaiTool != merged && f.oiTool != merged
}

func (f *spanFacts) toolNamed(name string) bool {
	return f.genaiTool == name || (f.oiTool == name && f.oiKind == "TOOL") || (f.tlEntity == name && f.tlKind == "tool")
}

// transfer mirrors TransferCondition, alternative for alternative.
func (n *native) transfer(f *spanFacts) bool {
	agent := n.name
	return (f.genaiTool == "transfer_to_agent" && jsonField(f.text(seenADKArgs), agentFields, agent)) ||
		(f.oiTool == "transfer_to_agent" && jsonField(f.text(seenOIInput), agentFields, agent)) ||
		f.toolNamed(n.to) || f.toolNamed(n.back) ||
		f.oiTool == n.handoffTool || f.name == n.handoff || f.handoffTo == agent || f.gotoNode == agent ||
		(f.genaiTool == delegate && jsonField(f.text(seenGenAIArgs), coworkerField, agent)) ||
		(f.oiTool == delegate && jsonField(f.text(seenOIInput), coworkerField, agent)) ||
		(f.tlEntity == delegate && jsonField(f.text(seenTLInput), coworkerField, agent))
}

const delegate = "Delegate work to coworker"

// The quoted field names the regexps `"agent_?[nN]ame"` and `"coworker"` match.
var (
	agentFields   = []string{`"agentname"`, `"agentName"`, `"agent_name"`, `"agent_Name"`}
	coworkerField = []string{`"coworker"`}
)

// jsonField reports whether s holds one of the quoted fields, then JSON
// whitespace, a colon, whitespace and the quoted value: the regexp
// `"field"\s*:\s*"value"`, unanchored, without the regexp.
func jsonField(s string, fields []string, value string) bool {
	for _, field := range fields {
		for rest := s; ; {
			i := strings.Index(rest, field)
			if i < 0 {
				break
			}
			if followedByValue(rest[i+len(field):], value) {
				return true
			}
			rest = rest[i+1:] // a field's closing quote may open the next one
		}
	}
	return false
}

// followedByValue: s starts with \s*:\s*"value".
func followedByValue(s, value string) bool {
	s = trimSpace(s)
	if !strings.HasPrefix(s, ":") {
		return false
	}
	s = trimSpace(s[1:])
	return len(s) >= len(value)+2 && s[0] == '"' && s[1:1+len(value)] == value && s[1+len(value)] == '"'
}

// trimSpace drops leading \s: the regexp class [\t\n\f\r ].
func trimSpace(s string) string {
	return strings.TrimLeft(s, "\t\n\f\r ")
}
