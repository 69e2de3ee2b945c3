// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/fixtures"
)

const mineConfig = "testdata/mine/weather.yaml"

func weatherRuns() (good, bad []string) {
	dir := fixtures.Dir()
	for _, f := range []string{"adk-js/strong-run-01.json", "adk-weather/adk-good-42-0.json", "adk-weather/adk-good-42-1.json"} {
		good = append(good, filepath.Join(dir, f))
	}
	for _, f := range []string{"adk-js/weak-run-05.json", "adk-weather/adk-bad-43-0.json", "adk-weather/adk-bad-43-1.json"} {
		bad = append(bad, filepath.Join(dir, f))
	}
	return good, bad
}

// violates runs assertions over one group's bits and says which violate.
func violates(t *testing.T, cfgs []assertion.Config, names []string, bits []uint64) []string {
	t.Helper()
	compiled, err := assertion.Compile(cfgs, names, 0)
	if err != nil {
		t.Fatal(err)
	}
	evs := make([]assertion.Event, len(bits))
	for i, b := range bits {
		evs[i] = assertion.Event{Bits: b, Time: int64(i) * 1e6, Name: "e"}
	}
	var out []string
	for _, v := range assertion.NewRunner(compiled, assertion.Options{MaxEventsPerGroup: 1 << 20}).Run("g", evs, true) {
		if v.Violation {
			out = append(out, v.Assertion.Name)
		}
	}
	return out
}

// From the strong weather runs alone, the mined assertions imply the
// paper's te1, te2 and te3: on random groups over the same predicates,
// whenever one of them is violated, a mined assertion is too. And they flag
// both faulty runs.
func TestMineWeatherImpliesThePapersAssertions(t *testing.T) {
	good, bad := weatherRuns()
	rep, err := mine(mineOptions{config: mineConfig, name: "temporalcheck/mined", minSupport: 1, maxChance: 1, maxK: 10, noValues: true, good: good, bad: bad})
	if err != nil {
		t.Fatal(err)
	}
	if rep.groups != 2 || len(rep.bad) != 2 || rep.unflagged != 0 || rep.mined.Refuted != 0 {
		t.Fatalf("groups %d, bad groups %d, unflagged %d, refuted %d", rep.groups, len(rep.bad), rep.unflagged, rep.mined.Refuted)
	}
	names := []string{"xferToGreeting", "xferToWeather", "xferToFarewell", "sayHello", "sayGoodbye", "getWeather"}
	names = append(names, rep.auto...)
	if len(rep.auto) != 0 {
		t.Errorf("auto predicates %v kept, though each tool and agent of the runs has a declared predicate", rep.auto)
	}
	paper := []assertion.Config{
		{Name: "te1", Always: "xferToGreeting >> sayHello + xferToWeather"},
		{Name: "te2", Always: "xferToFarewell >> sayGoodbye + xferToWeather"},
		{Name: "te3", Always: "xferToWeather >> (getWeather | xferToGreeting | xferToFarewell)"},
	}
	mined := rep.configs()
	r := rand.New(rand.NewPCG(42, 43))
	hits := map[string]int{}
	for range 3000 {
		// events as agents emit them: one tool call or transfer each
		bits := make([]uint64, 1+r.IntN(8))
		for i := range bits {
			bits[i] = 1 << r.IntN(6)
		}
		for _, te := range violates(t, paper, names, bits) {
			hits[te]++
			if len(violates(t, mined, names, bits)) == 0 {
				t.Fatalf("%s is violated on %v, no mined assertion is", te, bits)
			}
		}
	}
	for _, te := range []string{"te1", "te2", "te3"} {
		if hits[te] < 50 {
			t.Errorf("%s violated on only %d random groups: the test hardly tried it", te, hits[te])
		}
	}
}

// The block written is a configuration check runs as it is: no violation
// on the good runs, one at least on each bad one. (Two good runs are too
// few for any proposal to be strong: --min-support 1 --max-chance 1 makes
// every one of them strong.)
func TestMineBlockRunsInCheck(t *testing.T) {
	good, bad := weatherRuns()
	out := filepath.Join(t.TempDir(), "mined.yaml")
	args := append([]string{"mine", "--config", mineConfig, "--min-support", "1", "--max-chance", "1", "--out", out}, good...)
	args = append(append(args, "--against"), bad...)
	code, stdout, stderr := runCmd(args...)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "every bad group breaks a strong proposal") {
		t.Fatalf("mine: exit %d\n%s\n%s", code, stdout, stderr)
	}
	block, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"temporalcheck/mined:", "group_by: conversation", "- {name: xferToGreeting, transfer_to: greeting_agent}",
		"# support 2 of 2 groups (2 events), by chance 0.091: every xferToGreeting is followed by sayHello within 1 event", "breaks 2 of 2 bad groups",
		"handoff_returns: {to: xferToGreeting, tools: sayHello, back: xferToWeather, k: 2}", "never: {x: xferToFarewell}"} {
		if !strings.Contains(string(block), want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
	if code, stdout, stderr := runCmd(append([]string{"check", "--config", out}, good...)...); code != 0 || !strings.Contains(stdout, ", 0 violations") ||
		!strings.Contains(stdout, "first_xferToGreeting: triggered at 2 of 8 events (the first event of each sequence only)") {
		t.Errorf("check of the good runs: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, stdout, _ := runCmd(append([]string{"check", "--config", out, "--format", "json"}, good...)...); !strings.Contains(stdout, `"pattern": "first(x: xferToGreeting)"`) {
		t.Errorf("check --format json names no pattern:\n%s", stdout)
	}
	for _, files := range [][]string{bad[:1], bad[1:]} {
		if code, stdout, stderr := runCmd(append([]string{"check", "--config", out}, files...)...); code != 1 || !strings.Contains(stdout, "VIOLATION") {
			t.Errorf("check of %v: exit %d\n%s\n%s", files, code, stdout, stderr)
		}
	}
}

// A bad group no mined assertion flags is told, and fails the run.
func TestMineUnflaggedBadGroup(t *testing.T) {
	good, _ := weatherRuns()
	code, stdout, stderr := runCmd("mine", "--config", mineConfig, "--min-support", "1", "--max-chance", "1", good[0], "--against", good[1], good[2])
	if code != 1 || !strings.Contains(stderr, "NOT FLAGGED group session-") || !strings.Contains(stderr, "1 bad group no strong proposal flags") ||
		!strings.Contains(stdout, "processors:") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// Tools and agents without a declared predicate get one of their own.
func TestMineDeclaresToolsAndAgents(t *testing.T) {
	good, _ := weatherRuns()
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(cfg, []byte("processors:\n  temporalcheck:\n    group_by: conversation\n    predicates:\n      - {name: sayHello, tool: say_hello}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(append([]string{"mine", "--config", cfg}, good...)...)
	if code != 0 || !strings.Contains(stderr, "predicates declared for mining: to_greeting_agent, to_weather_agent_v2, tool_get_weather") ||
		!strings.Contains(stdout, "- {name: to_greeting_agent, transfer_to: greeting_agent}") ||
		!strings.Contains(stdout, "first: {x: to_greeting_agent}") || strings.Contains(stdout, "tool_say_hello") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

func TestMineErrors(t *testing.T) {
	good, _ := weatherRuns()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mine", good[0]}, "--config is required"},
		{[]string{"mine", "--config", mineConfig}, "no good trace files given"},
		{[]string{"mine", "--config", mineConfig, good[0], "--against"}, "--against: give the bad trace files after it"},
		{[]string{"mine", "--config", mineConfig, "--max-k", "0", good[0]}, "--max-k 0: want 1..1048575"},
		{[]string{"mine", "--config", mineConfig, "--min-support", "0", good[0]}, "--min-support 0: want at least 1"},
		{[]string{"mine", "--config", mineConfig, "--name", "probguard/x", good[0]}, `--name "probguard/x": want temporalcheck or temporalcheck/NAME`},
		{[]string{"mine", "--config", mineConfig, "--processor", "temporalcheck/nope", good[0]}, `no processor "temporalcheck/nope"`},
		{[]string{"mine", "--config", mineConfig, "nope.json"}, "nope.json"},
		{[]string{"mine", "--config", mineConfig, "--max-chance", "0", good[0]}, "--max-chance 0: want a probability above 0, at most 1"},
		{[]string{"mine", "--config", mineConfig, "--holdout", "-1", good[0]}, "--holdout -1: want 0 or more good groups"},
		{[]string{"mine", "--config", mineConfig, "--holdout", "1", good[0]}, "--holdout 1: the good traces have 1 group; hold out fewer"},
		{[]string{"mine", "--config", mineConfig, "--alias", "nope=xferToWeather", good[0]}, `--alias nope=xferToWeather: no predicate "nope", nor a tool or agent of that name in the good runs`},
		{[]string{"mine", "--config", mineConfig, "--alias", "xferToWeather=sayHello", good[0]}, "are not of one kind"},
	} {
		code, _, stderr := runCmd(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestSplitAgainst(t *testing.T) {
	rest, bad, err := splitAgainst([]string{"--config", "c", "g1", "--against", "b1", "b2", "--max-k", "3", "g2"})
	if err != nil || !slices.Equal(rest, []string{"--config", "c", "g1", "--max-k", "3", "g2"}) || !slices.Equal(bad, []string{"b1", "b2"}) {
		t.Errorf("rest %v, bad %v, err %v", rest, bad, err)
	}
}
