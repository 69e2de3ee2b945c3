// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest/observer"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// typoLines are the messages of the typo warnings logged.
func typoLines(entries []observer.LoggedEntry) []string {
	var out []string
	for _, e := range entries {
		if strings.Contains(e.Message, "of traffic") {
			out = append(out, e.Message)
		}
	}
	slices.Sort(out)
	return out
}

// A misspelt agent name and a misspelt group_by are said within a minute
// of traffic, each with the name the spans carried.
func TestTyposAreSaidWithinAMinute(t *testing.T) {
	p, _, clock, _, logs := observed(t, "paper", func(c *Config) {
		c.GroupBy = "conversaton"
		for i := range c.Predicates {
			switch c.Predicates[i].TransferTo {
			case "greeting_agent":
				c.Predicates[i].TransferTo = "greeting_agnet"
			case "farewell_agent":
				c.Predicates[i].Optional = true // may never hold: never said
			}
		}
	})
	defer shutdown(t, p) // not started: time moves only by Tick
	feed(t, p, fixtures.Traces(t, "adk-weather/adk-bad-43-0.json"), fixtures.Traces(t, "adk-weather/adk-bad-43-1.json"))
	clock.t = clock.t.Add(30 * time.Second)
	p.Tick(clock.t) // released and judged: the minute starts
	if got := typoLines(logs.All()); len(got) != 0 {
		t.Fatalf("warned before a minute of traffic: %q", got)
	}
	clock.t = clock.t.Add(time.Minute)
	p.Tick(clock.t)
	got := typoLines(logs.All())
	for _, want := range []string{
		`group_by "conversaton": no trace carried it in the first 1m0s of traffic, so every trace is a group of its own; did you mean "conversation"?`,
		`predicate xferToGreeting has not held once in the first 1m0s of traffic: assertions over it pass untested; check its name and convention; did you mean "greeting_agent"?`,
		// Held nowhere in these two turns, and no name is near: said, without a guess.
		`predicate sayGoodbye has not held once in the first 1m0s of traffic: assertions over it pass untested; check its name and convention (`,
	} {
		if !slices.ContainsFunc(got, func(l string) bool { return strings.HasPrefix(l, want) }) {
			t.Errorf("no warning %q in:\n%s", want, strings.Join(got, "\n"))
		}
	}
	for _, l := range got {
		if strings.HasPrefix(l, "predicate getWeather") || strings.HasPrefix(l, "predicate sayHello") {
			t.Errorf("a predicate that held was said never to: %s", l)
		}
		if strings.HasPrefix(l, "predicate xferToFarewell") {
			t.Errorf("an optional predicate was warned about: %s", l)
		}
	}
}

// Judged on arrival, traces that carry the group_by attribute are grouped as
// they come: after a minute of them, the look warns about a misspelt
// predicate (it ran) and nothing about group_by, and counts one suspected
// typo, the predicate's.
func TestGroupByCarriedOnArrivalIsNotSuspected(t *testing.T) {
	p, _, clock, reader, logs := observed(t, "paper", func(c *Config) {
		c.GroupBy = "conversation"
		c.Judge = JudgeOnArrival
		for i := range c.Predicates {
			switch c.Predicates[i].TransferTo {
			case "greeting_agent":
				c.Predicates[i].TransferTo = "greeting_agnet"
			case "farewell_agent":
				c.Predicates[i].Optional = true
			}
			if c.Predicates[i].Tool == "say_goodbye" {
				c.Predicates[i].Optional = true
			}
		}
	})
	defer shutdown(t, p) // not started: time moves only by Tick
	feed(t, p, fixtures.Traces(t, "adk-weather/adk-bad-43-0.json"), fixtures.Traces(t, "adk-weather/adk-bad-43-1.json"))
	clock.t = clock.t.Add(90 * time.Second)
	p.Tick(clock.t)
	got := typoLines(logs.All())
	if len(got) != 1 || !strings.HasPrefix(got[0], "predicate xferToGreeting has not held once") {
		t.Errorf("want the misspelt predicate's warning alone, got:\n%s", strings.Join(got, "\n"))
	}
	if n := sums(t, reader)["otelcol_processor_temporalcheck_suspected_typos"]; n != 1 {
		t.Errorf("%d suspected typos counted, want 1", n)
	}
}
