// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"regexp"
	"strings"
	"testing"
)

// FuzzJSONScans: each scan does exactly what the regexp in the generated
// OTTL does, and what a reader takes out, its matcher accepts.
func FuzzJSONScans(f *testing.F) {
	for _, j := range jsons {
		f.Add(j, "greeting_agent")
	}
	f.Add(toolMessagePrefix+`"name" :"say_hello"}}`, "say_hello")
	f.Add(`{"goto":[ "a.*b" ] } `, "a.*b")
	f.Add(`{"messages":[`+failedToolMessage+`Error: \"x\" \\","name":"get_weather","tool_call_id":"c"}},`+
		failedToolMessage+`","name":"a.*b"}}]}`, "a.*b")
	f.Add(`{"goto":"x"}`, "x")
	f.Add(`{"langgraph_checkpoint_ns":"a|b:c:1|__start__:2"}`, "b:c")
	f.Add(`{"langgraph_checkpoint_ns":"x|y\"|a:1|__start__:2"}`, `y"|a`)
	f.Add(`{"langgraph_checkpoint_ns":"b:1|__start__:2","langgraph_checkpoint_ns" :"a:1|__start__:2"}`, "a")
	f.Fuzz(func(t *testing.T, s, value string) {
		q := regexp.QuoteMeta(value)
		for _, c := range []struct {
			name    string
			got     bool
			pattern string
		}{
			{"jsonField name", jsonField(s, nameField, value), `"name"\s*:\s*"` + q + `"`},
			{"toolMessageNamed", toolMessageNamed(s, value),
				`^` + regexp.QuoteMeta(toolMessagePrefix) + `(?s:.*)"name"\s*:\s*"` + q + `"`},
			{"failedToolMessageNamed", failedToolMessageNamed(s, value), failedToolMessagePattern(q)},
			{"commandGoesTo", commandGoesTo(s, value), `"goto"\s*:\s*(?:\[\s*"` + q + `"\s*\]|"` + q + `")\s*\}\s*$`},
			{"startsRun", startsRun(s, value+":"),
				`"langgraph_checkpoint_ns"\s*:\s*"(?:[^"|]*\|)*` + q + `:[^"|]*\|__start__:[^"|]*"`},
		} {
			re, err := regexp.Compile(c.pattern)
			if err != nil {
				t.Skip("value is not valid UTF-8 for a pattern") // cannot occur for a YAML string
			}
			if want := re.MatchString(s); c.got != want {
				t.Fatalf("%s(%q, %q) = %v, regexp says %v", c.name, s, value, c.got, want)
			}
		}
		if got, want := findNamespaces(s).startsRun(s, value+":"), startsRun(s, value+":"); got != want {
			t.Fatalf("namespaces found once say %v, startsRun %v (%q, %q)", got, want, s, value)
		}
		if strings.Contains(s, `\`) {
			return // a reader decodes escapes; the matchers read text
		}
		for _, c := range []struct {
			name   string
			read   func(string) (string, bool)
			accept func(string, string) bool
		}{
			{"fieldString", func(s string) (string, bool) { return fieldString(s, agentFields) },
				func(s, v string) bool { return jsonField(s, agentFields, v) }},
			{"toolMessageName", toolMessageName, toolMessageNamed},
			{"commandTarget", commandTarget, commandGoesTo},
			{"runStarter", runStarter, func(s, v string) bool { return startsRun(s, v+":") }},
		} {
			if v, ok := c.read(s); ok && !c.accept(s, v) {
				t.Fatalf("%s(%q) = %q, which its matcher does not accept", c.name, s, v)
			}
		}
	})
}

func TestReaders(t *testing.T) {
	check := func(name string, got string, ok bool, want string) {
		t.Helper()
		if want == "-" {
			if ok {
				t.Errorf("%s: read %q, want nothing", name, got)
			}
			return
		}
		if !ok || got != want {
			t.Errorf("%s: read %q (%v), want %q", name, got, ok, want)
		}
	}
	v, ok := fieldString(`{"agentName":"greeting_agent"}`, agentFields)
	check("ADK-JS args", v, ok, "greeting_agent")
	v, ok = fieldString(`{"agent_name": "gr\"e\u00e9t"}`, agentFields)
	check("escaped", v, ok, `gr"eét`)
	v, ok = fieldString(`{"agent_name": "bad \x escape"}`, agentFields)
	check("bad escape", v, ok, "-")
	v, ok = fieldString(`{"agent_name": 3, "agentName": "x"}`, agentFields)
	check("first string value", v, ok, "x")
	v, ok = fieldString(`{"agent_name": "cut short`, agentFields)
	check("unterminated", v, ok, "-")
	v, ok = toolMessageName(toolMessagePrefix + `"status":"success","content":"Hello!","tool_call_id":"c1","name":"say_hello"}}`)
	check("ToolMessage", v, ok, "say_hello")
	v, ok = toolMessageName(`{"lg_name":"Command","update":{"messages":[` + toolMessagePrefix + `"name":"say_hello"}}]},"goto":["a"]}`)
	check("a ToolMessage inside a Command", v, ok, "-")
	v, ok = commandTarget(`{"lg_name":"Command","update":{"messages":[{"goto":"z"}]},"goto":["greeting_agent"]}`)
	check("Command", v, ok, "greeting_agent")
	v, ok = commandTarget(`{"update":{},"goto" : "weather_agent" }` + "\n")
	check("Command, goto a string", v, ok, "weather_agent")
	v, ok = commandTarget(`{"goto":["a","b"]}`)
	check("Command to two nodes", v, ok, "-")
	v, ok = commandTarget(`{"x":{"goto":["a"]}}`)
	check("goto not at the top", v, ok, "-")
	v, ok = runStarter(`{"langgraph_checkpoint_ns":"team:1|greeting_agent:2|__start__:3"}`)
	check("namespace", v, ok, "greeting_agent")
	v, ok = runStarter(`{"langgraph_checkpoint_ns":"__start__:3"}`)
	check("top-level graph", v, ok, "-")
	v, ok = runStarter(`{"langgraph_checkpoint_ns":"greeting_agent:2|agent:3"}`)
	check("not a start", v, ok, "-")
}
