// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"encoding/json"
	"strings"
)

// Scans of JSON text held in span attributes. The matchers (jsonField,
// toolMessageNamed, commandGoesTo, startsRun) each do exactly what the
// regexp in the generated OTTL does, without the regexp (FuzzJSONScans
// checks it); the readers (fieldString, toolMessageName, commandTarget,
// runStarter) take out the value for Describe, and agree with the matchers:
// what a reader returns, the matcher accepts.
//
// They read text, not parsed JSON, so that an attribute an exporter cut
// short still reads, and so that a Command's message history, which can be
// long, is not decoded. The price: a field is found at any depth.

// The quoted field names the regexps `"agent_?[nN]ame"` and `"coworker"` match.
var (
	agentFields   = []string{`"agentname"`, `"agentName"`, `"agent_name"`, `"agent_Name"`}
	coworkerField = []string{`"coworker"`}
	nameField     = []string{`"name"`}
	nsField       = []string{`"langgraph_checkpoint_ns"`}
)

// toolMessagePrefix opens a LangChain JS ToolMessage serialized with
// JSON.stringify (its toJSON: lc, type, id, kwargs, in that order, no
// spaces): Traceloop's LangChain instrumentation puts a tool's result so in
// traceloop.entity.output, and only there the tool's own name (kwargs.name).
const toolMessagePrefix = `{"lc":1,"type":"constructor","id":["langchain_core","messages","ToolMessage"],"kwargs":{`

// toolsNodeOutputPrefix opens the output of a LangGraph ToolNode's span
// under Traceloop's LangChain instrumentation: the node's new messages,
// ToolMessages (a graph's output starts with the user's message, a model
// node's with an AIMessage).
const toolsNodeOutputPrefix = `{"messages":[` + toolMessagePrefix

// failedToolMessage opens the ToolMessage LangGraph's ToolNode makes of a
// tool that threw: `new ToolMessage({status: "error", content, name,
// tool_call_id})`, serialized in that order.
const failedToolMessage = toolMessagePrefix + `"status":"error","content":"`

// failedToolMessageNamed: s holds a failed ToolMessage whose own name is the
// tool, the regexp failedToolMessagePattern(QuoteMeta(tool)), unanchored.
func failedToolMessageNamed(s, tool string) bool {
	for rest := s; ; {
		name, after, ok := nextFailedToolMessage(rest)
		if !ok {
			return false
		}
		if strings.HasPrefix(name, tool) && len(name) > len(tool) && name[len(tool)] == '"' {
			return true
		}
		rest = after
	}
}

// failedToolMessageName is the name of the first failed ToolMessage in s
// whose name is a plain string, for Describe.
func failedToolMessageName(s string) (string, bool) {
	for rest := s; ; {
		name, after, ok := nextFailedToolMessage(rest)
		if !ok {
			return "", false
		}
		if end := strings.IndexAny(name, `"\`); end > 0 && name[end] == '"' {
			return name[:end], true
		}
		rest = after
	}
}

// nextFailedToolMessage finds the next failedToolMessage in s, reads its
// content (a JSON string: to the first quote no backslash escapes) and
// returns what follows `","name":"` right after it (name is "" when
// something else follows), and where to look for the next one.
func nextFailedToolMessage(s string) (name, after string, ok bool) {
	i := strings.Index(s, failedToolMessage)
	if i < 0 {
		return "", "", false
	}
	after = s[i+1:] // a message may open inside this one's text only if it is not JSON
	content := s[i+len(failedToolMessage):]
	for j := 0; j < len(content); j++ {
		switch content[j] {
		case '\\':
			j++
		case '"':
			name, _ = strings.CutPrefix(content[j:], `","name":"`)
			if len(name) == len(content[j:]) {
				name = ""
			}
			return name, after, true
		}
	}
	return "", after, true
}

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
			if v, ok := stringOpens(rest[i+len(field):]); ok && strings.HasPrefix(v, value) &&
				len(v) > len(value) && v[len(value)] == '"' {
				return true
			}
			rest = rest[i+1:] // a field's closing quote may open the next one
		}
	}
	return false
}

// stringOpens: s starts with \s*:\s*" (what follows a field name); it
// returns the text after that quote.
func stringOpens(s string) (string, bool) {
	s = trimSpace(s)
	if !strings.HasPrefix(s, ":") {
		return "", false
	}
	s = trimSpace(s[1:])
	if !strings.HasPrefix(s, `"`) {
		return "", false
	}
	return s[1:], true
}

// trimSpace drops leading \s: the regexp class [\t\n\f\r ]. A loop, not
// strings.TrimLeft, which builds its set of bytes at every call: that
// measured as a twentieth of a paper configuration's Eval.
func trimSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	return s
}

func trimSpaceRight(s string) string {
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// toolMessageNamed: s is a serialized ToolMessage naming the tool, the
// regexp `^` + toolMessagePrefix + `(?s:.*)"name"\s*:\s*"tool"`.
func toolMessageNamed(s, tool string) bool {
	rest, ok := strings.CutPrefix(s, toolMessagePrefix)
	return ok && jsonField(rest, nameField, tool)
}

// commandGoesTo: s is a LangGraph Command (as JSON.stringify writes one;
// goto is its last key) going to the agent alone, the regexp
// `"goto"\s*:\s*(?:\[\s*"agent"\s*\]|"agent")\s*\}\s*$`. It reads s from
// the end: a Command's update before goto can be long.
func commandGoesTo(s, agent string) bool {
	s, ok := strings.CutSuffix(trimSpaceRight(s), "}")
	if !ok {
		return false
	}
	s = trimSpaceRight(s)
	quoted := func(s string) (string, bool) {
		if !strings.HasSuffix(s, `"`) || !strings.HasSuffix(s[:len(s)-1], agent) || len(s) < len(agent)+2 ||
			s[len(s)-len(agent)-2] != '"' {
			return "", false
		}
		return s[:len(s)-len(agent)-2], true
	}
	if list, isList := strings.CutSuffix(s, "]"); isList {
		if s, ok = quoted(trimSpaceRight(list)); !ok {
			return false
		}
		if s, ok = strings.CutSuffix(trimSpaceRight(s), "["); !ok {
			return false
		}
	} else if s, ok = quoted(s); !ok {
		return false
	}
	if s, ok = strings.CutSuffix(trimSpaceRight(s), ":"); !ok {
		return false
	}
	return strings.HasSuffix(trimSpaceRight(s), `"goto"`)
}

// startsRun: s (LangGraph's metadata JSON) has a checkpoint namespace whose
// last segment is a __start__ task right under a segment of the node
// nsAgent names ("agent:"), the regexp
// `"langgraph_checkpoint_ns"\s*:\s*"(?:[^"|]*\|)*` + agent + `:[^"|]*\|__start__:[^"|]*"`.
func startsRun(s, nsAgent string) bool {
	for off := 0; ; {
		ns, next, ok := nextNamespace(s, off)
		if !ok {
			return false
		}
		if nsStartsRun(s[ns:], nsAgent) {
			return true
		}
		off = next
	}
}

// nextNamespace finds, from off, the next value of "langgraph_checkpoint_ns"
// in s: where its text starts (after the opening quote), and where to look
// for the one after.
func nextNamespace(s string, off int) (ns, next int, ok bool) {
	key := nsField[0]
	for {
		i := strings.Index(s[off:], key)
		if i < 0 {
			return 0, 0, false
		}
		at := off + i + len(key)
		next = off + i + 1 // a key's closing quote may open the next one
		if v, ok := stringOpens(s[at:]); ok {
			return len(s) - len(v), next, true
		}
		off = next
	}
}

// namespaces is where the checkpoint namespaces of a span's metadata text
// are: found once per __start__ span by gather, then read by every agent
// predicate (startsRun from there, same answer), so that a text is scanned
// once and not once a predicate.
type namespaces struct {
	first, next int32 // the first namespace's text; where to look for more
	found, more bool  // there is a first; there is another after it
}

func findNamespaces(s string) namespaces {
	first, next, found := nextNamespace(s, 0)
	if !found {
		return namespaces{}
	}
	_, _, more := nextNamespace(s, next)
	return namespaces{first: int32(first), next: int32(next), found: true, more: more}
}

// startsRun is startsRun(s, nsAgent), s the text ns was found in.
func (ns namespaces) startsRun(s, nsAgent string) bool {
	return ns.found && (nsStartsRun(s[ns.first:], nsAgent) || (ns.more && startsRun(s[ns.next:], nsAgent)))
}

// nsStartsRun: ns (the text after the namespace's opening quote) is whole
// segments, then nsAgent at the start of one, then its task id, then a
// last segment __start__:<task id>, then the closing quote.
func nsStartsRun(ns, nsAgent string) bool {
	for p := 0; ; {
		if tail, ok := strings.CutPrefix(ns[p:], nsAgent); ok && startTail(tail) {
			return true
		}
		j := quoteOrBar(ns[p:])
		if j < 0 || ns[p+j] == '"' {
			return false
		}
		p += j + 1
	}
}

// startTail: s is [^"|]*\|__start__:[^"|]*" and anything after.
func startTail(s string) bool {
	j := quoteOrBar(s)
	if j < 0 || s[j] != '|' {
		return false
	}
	s, ok := strings.CutPrefix(s[j+1:], graphStart+":")
	if !ok {
		return false
	}
	j = quoteOrBar(s)
	return j >= 0 && s[j] == '"'
}

// quoteOrBar is strings.IndexAny(s, `"|`) without building a byte set at
// every call.
func quoteOrBar(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '|' {
			return i
		}
	}
	return -1
}

// fieldString is the string value of the first of the fields (in order of
// fields, then of position) that holds one.
func fieldString(s string, fields []string) (string, bool) {
	for _, field := range fields {
		for rest := s; ; {
			i := strings.Index(rest, field)
			if i < 0 {
				break
			}
			if v, ok := stringOpens(rest[i+len(field):]); ok {
				if value, _, ok := jsonString(v); ok {
					return value, true
				}
			}
			rest = rest[i+1:]
		}
	}
	return "", false
}

// jsonString reads a JSON string's content up to its closing quote (s
// starts after the opening one) and returns it decoded, and the text after
// the closing quote. Without escapes it is a substring of s: no allocation.
func jsonString(s string) (value, after string, ok bool) {
	escaped := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			if !escaped {
				return s[:i], s[i+1:], true
			}
			var decoded string // its own variable: taking value's address would put value on the heap every time
			if json.Unmarshal([]byte(`"`+s[:i+1]), &decoded) != nil {
				return "", "", false
			}
			return decoded, s[i+1:], true
		}
	}
	return "", "", false
}

// toolMessageName is the tool a serialized ToolMessage names (kwargs.name,
// read as toolMessageNamed reads it).
func toolMessageName(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, toolMessagePrefix)
	if !ok {
		return "", false
	}
	return fieldString(rest, nameField)
}

// commandTarget is the one agent a serialized Command goes to (read as
// commandGoesTo reads it).
func commandTarget(s string) (string, bool) {
	i := strings.LastIndex(s, `"goto"`)
	if i < 0 {
		return "", false
	}
	v, ok := stringOpens(s[i+len(`"goto"`):])
	list := false
	if !ok {
		rest := trimSpace(s[i+len(`"goto"`):])
		if rest, ok = strings.CutPrefix(rest, ":"); !ok {
			return "", false
		}
		if rest, ok = strings.CutPrefix(trimSpace(rest), "["); !ok {
			return "", false
		}
		if v, ok = strings.CutPrefix(trimSpace(rest), `"`); !ok {
			return "", false
		}
		list = true
	}
	agent, after, ok := jsonString(v)
	if !ok {
		return "", false
	}
	after = trimSpace(after)
	if list {
		if after, ok = strings.CutPrefix(after, "]"); !ok {
			return "", false
		}
	}
	if after, ok = strings.CutPrefix(trimSpace(after), "}"); !ok || trimSpace(after) != "" {
		return "", false
	}
	return agent, true
}

// runStarter is the agent whose run a LangGraph __start__ task starts: the
// node of the namespace segment before the last one, if the last one is
// __start__ (read as startsRun reads it).
func runStarter(metadata string) (string, bool) {
	ns, ok := fieldString(metadata, nsField)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(ns, '|')
	if i < 0 || !strings.HasPrefix(ns[i+1:], graphStart+":") {
		return "", false
	}
	parent := ns[strings.LastIndexByte(ns[:i], '|')+1 : i]
	end := strings.LastIndexByte(parent, ':')
	if end <= 0 {
		return "", false
	}
	return parent[:end], true
}
