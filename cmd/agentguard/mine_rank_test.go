// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// step is one event of a made-up conversation in GenAI semantic
// conventions: a hand-off to an agent, or a tool call with its arguments and
// result as JSON.
type step struct {
	to, tool, args, result string
}

func handoff(agent string) step { return step{to: agent} }

func call(tool, args, result string) step { return step{tool: tool, args: args, result: result} }

// mineConversations writes the conversations (by ID) to an OTLP/JSON file, one
// trace each, their events a millisecond apart.
func mineConversations(t *testing.T, name string, convs map[string][]step) string {
	t.Helper()
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	n := 0
	for id, steps := range convs {
		n++
		for i, s := range steps {
			sp := ss.Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID([16]byte{byte(n), byte(n >> 8), 1}))
			sp.SetSpanID(pcommon.SpanID([8]byte{byte(n), byte(n >> 8), byte(i + 1)}))
			start := pcommon.Timestamp(1_700_000_000_000_000_000 + int64(n)*1e9 + int64(i)*1e6)
			sp.SetStartTimestamp(start)
			sp.SetEndTimestamp(start + 500_000)
			a := sp.Attributes()
			a.PutStr("gen_ai.conversation.id", id)
			if s.to != "" {
				sp.SetName("handoff " + s.to)
				a.PutStr("gen_ai.operation.name", "handoff")
				a.PutStr("gen_ai.handoff.to_agent", s.to)
				continue
			}
			sp.SetName("execute_tool " + s.tool)
			a.PutStr("gen_ai.operation.name", "execute_tool")
			a.PutStr("gen_ai.tool.name", s.tool)
			a.PutStr("gen_ai.tool.call.arguments", s.args)
			a.PutStr("gen_ai.tool.call.result", s.result)
		}
	}
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// bareConfig is a temporalcheck processor with no predicate of its own.
func bareConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(path, []byte("processors:\n  temporalcheck:\n    group_by: conversation\n    predicates: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// weatherTeam is a correct conversation of the weather team whose weather
// agent is called agent: a greeting, a lookup in city, a farewell.
func weatherTeam(agent, city string) []step {
	return []step{handoff("greeting_agent"), call("say_hello", `{}`, `{"result":"Hello!"}`), handoff(agent),
		call("get_weather", fmt.Sprintf(`{"city":%q}`, city), `{"status":"success"}`),
		handoff("farewell_agent"), call("say_goodbye", `{}`, `{"result":"Bye!"}`), handoff(agent)}
}

// Two versions of one agent (weather_agent, weather_agent_v2), each in
// half of the good runs, are one role: no proposal pairs one name with the
// other (never_after: {x: to_weather_agent, y: to_weather_agent_v2} holds
// only because no run has both), and every proposal about the role names
// both. Without alias detection the nonsense pair is proposed.
func TestMineAliasesAcrossVersions(t *testing.T) {
	convs := map[string][]step{}
	for i := range 12 {
		agent := "weather_agent"
		if i%2 == 1 {
			agent = "weather_agent_v2"
		}
		convs[fmt.Sprintf("c%02d", i)] = weatherTeam(agent, []string{"London", "Paris"}[i%2])
	}
	good := mineConversations(t, "good.json", convs)
	cfg := bareConfig(t)
	pair := regexp.MustCompile(`(never_after|before): \{x: to_weather_agent(_v2)?, y: to_weather_agent(_v2)?\}`)
	code, stdout, stderr := runCmd("mine", "--config", cfg, "--min-support", "1", "--max-chance", "1", good)
	if code != 0 || !strings.Contains(stderr, "one role, several names (aliases): to_weather_agent = to_weather_agent_v2") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if m := pair.FindString(stdout); m != "" {
		t.Errorf("a pair of one role proposed: %s\n%s", m, stdout)
	}
	for _, want := range []string{"- {name: to_weather_agent, transfer_to: weather_agent}", "- {name: to_weather_agent_v2, transfer_to: weather_agent_v2}",
		"handoff_returns: {to: to_greeting_agent, tools: tool_say_hello, back: [to_weather_agent, to_weather_agent_v2], k: 2}"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("block lacks %q:\n%s", want, stdout)
		}
	}
	// declared instead of found: the same
	code, stdout2, stderr := runCmd("mine", "--config", cfg, "--min-support", "1", "--max-chance", "1", "--auto-alias=false", "--alias", "weather_agent=to_weather_agent_v2", good)
	if code != 0 || stdout2 != stdout {
		t.Errorf("--alias weather_agent=to_weather_agent_v2: exit %d, another block:\n%s\n%s", code, stdout2, stderr)
	}
	// neither: the nonsense pairs come back
	if _, stdout, _ := runCmd("mine", "--config", cfg, "--min-support", "1", "--max-chance", "1", "--auto-alias=false", good); !pair.MatchString(stdout) {
		t.Errorf("without aliases no pair of the two names: the test tried nothing\n%s", stdout)
	}
}

// An argument whose values are few in the good runs, and a result that is
// constant, become value predicates (args:, result:) and never assertions
// over them; a bad run asking for another city breaks the argument's, and
// the block check runs flags it too.
func TestMineConstantArguments(t *testing.T) {
	convs, bad := map[string][]step{}, map[string][]step{}
	for i := range 24 {
		convs[fmt.Sprintf("c%02d", i)] = weatherTeam("weather_agent", []string{"London", "Paris", "New York"}[i%3])
	}
	bad["atlantis"] = weatherTeam("weather_agent", "Atlantis")
	goodFile, badFile := mineConversations(t, "good.json", convs), mineConversations(t, "bad.json", bad)
	out := filepath.Join(t.TempDir(), "mined.yaml")
	code, _, stderr := runCmd("mine", "--config", bareConfig(t), "--out", out, goodFile, "--against", badFile)
	block, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || !strings.Contains(stderr, `value predicate tool_get_weather_args_city: get_weather has args.city one of "London", "New York", "Paris" at every one of 24 calls`) ||
		!strings.Contains(stderr, "FLAGGED group atlantis (7 events) by values_tool_get_weather_args_city (violated)") {
		t.Fatalf("exit %d\n%s\n%s", code, stderr, block)
	}
	for _, want := range []string{
		"- {name: tool_get_weather_args_city, tool: get_weather, args: {city: '^(London|New York|Paris)$'}}",
		"- {name: tool_get_weather_result_status, tool: get_weather, result: {status: {equals: success}}}",
		"# support 24 of 24 groups (24 events), by chance 0.04: every tool_get_weather has args.city one of \"London\", \"New York\", \"Paris\"",
		"# breaks 1 of 1 bad groups\n      - name: values_tool_get_weather_args_city\n        never: tool_get_weather & ~tool_get_weather_args_city",
	} {
		if !strings.Contains(string(block), want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
	if code, stdout, stderr := runCmd("check", "--config", out, goodFile); code != 0 {
		t.Errorf("check of the good runs: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, _ := runCmd("check", "--config", out, badFile); code != 1 || !strings.Contains(stdout, "values_tool_get_weather_args_city") {
		t.Errorf("check of the bad run: exit %d\n%s", code, stdout)
	}
	if _, _, stderr := runCmd("mine", "--config", bareConfig(t), "--values=false", goodFile); strings.Contains(stderr, "value predicate") {
		t.Errorf("--values=false: value predicates still\n%s", stderr)
	}
}

// --holdout K mines on all but K good groups, spread over the keys in
// order (of c00..c11, c02, c06 and c10), and says which proposals each
// breaks: c06, which starts without a greeting, breaks first(to_greeting).
func TestMineHoldout(t *testing.T) {
	convs := map[string][]step{}
	for i := range 12 {
		convs[fmt.Sprintf("c%02d", i)] = weatherTeam("weather_agent", "London")
	}
	convs["c06"] = weatherTeam("weather_agent", "London")[2:]
	good := mineConversations(t, "good.json", convs)
	code, _, stderr := runCmd("mine", "--config", bareConfig(t), "--holdout", "3", good)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"agentguard mine: 9 good groups (3 more held out) of 1 file, 63 events:",
		"held out 3 good groups (spread evenly over the keys in order):",
		"  group c02 (7 events): breaks no proposal",
		"  group c06 (5 events): BREAKS ",
		"first_to_greeting_agent (violated)",
		"  group c10 (7 events): breaks no proposal",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !regexp.MustCompile(`the held-out groups break [1-9][0-9]* of [0-9]+ strong proposals`).MatchString(stderr) {
		t.Errorf("no count of the proposals broken:\n%s", stderr)
	}
}

// Fewer good groups than pattern.MinGroups: a warning that says why, every
// proposal commented out as weak (--min-support), and the assertions list
// empty; --min-support 1 --max-chance 1 proposes everything.
func TestMineFewGroupsWarning(t *testing.T) {
	good, _ := weatherRuns()
	code, stdout, stderr := runCmd(append([]string{"mine", "--config", mineConfig}, good...)...)
	if code != 0 || !strings.Contains(stderr, "agentguard mine: warning: 2 good groups: too few to tell a rule from chance. "+
		"Two events that each happen once are in either order by chance half the time: 2 groups in that order happen by chance with probability 0.25, "+
		"5 with 1/32 (below 0.05); record 5 good groups at least.") ||
		!strings.Contains(stderr, "may still fail on up to 100% of correct runs (rule of three, 95% confidence)") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "    assertions:\n      # weak: ") ||
		!strings.Contains(stdout, "      # weak: exercised in 2 groups (fewer than 5), holds by chance with probability 0.18: every xferToGreeting is followed by sayHello within 1 event") ||
		!strings.Contains(stdout, "      # - name: response_xferToGreeting_sayHello\n      #   response: {x: xferToGreeting, y: sayHello, k: 1}\n") {
		t.Errorf("block:\n%s", stdout)
	}
	_, stdout, stderr = runCmd("mine", "--config", mineConfig, "--min-support", "1", "--max-chance", "1", good[0], good[1], good[2])
	if strings.Contains(stdout, "# weak") || !strings.Contains(stdout, "      - name: response_xferToGreeting_sayHello\n") || !strings.Contains(stderr, ", 0 weak") {
		t.Errorf("--min-support 1 --max-chance 1:\n%s\n%s", stdout, stderr)
	}
}

// The household episodes (testdata/mining/household): from the safe ones,
// against the unsafe ones, the proposals that break unsafe episodes come
// first, every unsafe episode breaks one, and no safe episode held out
// breaks a strong one.
func TestMineHouseholdSeparatingFirst(t *testing.T) {
	dir := filepath.Join(filepath.Dir(fixtures.Dir()), "mining")
	code, stdout, stderr := runCmd("mine", "--config", filepath.Join(dir, "household.yaml"), "--holdout", "5",
		filepath.Join(dir, "household", "safe.jsonl"), "--against", filepath.Join(dir, "household", "unsafe.jsonl"))
	if code != 0 || !strings.Contains(stderr, "every bad group breaks a strong proposal") ||
		!regexp.MustCompile(`the held-out groups break 0 of [0-9]+ strong proposals`).MatchString(stderr) {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	// the strong assertions in order: those that break bad groups first
	breaks := regexp.MustCompile(`# breaks ([0-9]+) of [0-9]+ bad groups`).FindAllStringSubmatch(stdout, -1)
	if len(breaks) < 5 || breaks[0][1] == "0" {
		t.Fatalf("breaks: %v\n%s", breaks, stdout)
	}
	seenZero := false
	for _, b := range breaks {
		if b[1] == "0" {
			seenZero = true
		} else if seenZero {
			t.Errorf("a strong proposal breaking %s bad groups after one breaking none:\n%s", b[1], stdout)
		}
	}
}
