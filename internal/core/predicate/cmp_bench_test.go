package predicate

import "testing"

func BenchmarkCompareJSONStrategies(b *testing.B) {
	for name, cond := range map[string]string{
		"ParseJSON": `span.attributes["gen_ai.tool.name"] == "transfer_to_agent" and ParseJSON(span.attributes["gcp.vertex.agent.tool_call_args"])["agent_name"] == "greeting_agent"`,
		"IsMatch":   `span.attributes["gen_ai.tool.name"] == "transfer_to_agent" and IsMatch(span.attributes["gcp.vertex.agent.tool_call_args"], "\"agent_?[nN]ame\"\\s*:\\s*\"greeting_agent\"")`,
	} {
		b.Run(name, func(b *testing.B) {
			s := mustCompile(b, Config{Predicates: []Named{{Name: "x", Predicate: Predicate{Condition: cond}}}}, nil)
			rs, ss, sp := handBuilt("execute_tool transfer_to_agent", "gen_ai.operation.name", "execute_tool",
				"gen_ai.tool.name", "transfer_to_agent", "gcp.vertex.agent.tool_call_args", `{"agent_name": "greeting_agent"}`)
			b.ReportAllocs()
			for b.Loop() {
				if ok, sig := s.Eval(rs, ss, sp); !ok || sig != 1 {
					b.Fatal(ok, sig)
				}
			}
		})
	}
}
