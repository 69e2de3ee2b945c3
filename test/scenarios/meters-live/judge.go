// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// meterKinds are the kinds played: the meter kinds of
// examples/live/shared/kinds.js, and strong, the weather team's correct
// conversation, which reports no tokens.
var meterKinds = []string{"strong", "loop", "varied-calls", "overrun", "under-budget", "leak", "summary"}

// kindSpec is what the harness knows of a kind: the assertion of
// meters.yaml it must break (none for a correct one) and the tokens each of
// its model calls reports (0: none).
type kindSpec struct {
	expect        string
	tokensPerCall int64
}

var kinds = map[string]kindSpec{
	"strong":       {"", 0},
	"loop":         {"no_loops", 500},
	"varied-calls": {"", 500},
	"overrun":      {"token_budget", 5000},
	"under-budget": {"", 1800},
	"leak":         {"no_key_leak", 500},
	"summary":      {"", 500},
}

// What examples/live/meters.yaml bounds, and the fake key's prefix
// (examples/live/shared/tools.js).
const (
	repeatsN    = 3     // loop: repeats n (within 10: every call of a conversation here)
	budgetMax   = 20000 // overTokens: budget max
	keyPrefix   = "sk-proj-"
	userTurns   = 3 // each turn ends in one model call answering in text
	sendPrefix  = "send_"
	readingTool = "read_file"
)

// expected reads, from the conversation's spans alone, where each
// assertion of meters.yaml must be violated: the call that makes a tool
// call (tool and raw arguments) the n-th, the model call whose tokens take
// the total past the budget, a send_* call carrying the key after a
// read_file. It gives the span ID by assertion, and why.
func expected(conv []span) map[string]spanWhy {
	out := map[string]spanWhy{}
	seen := map[string]int{}
	total, read := int64(0), false
	for _, s := range conv {
		if s.hasTokens {
			total += s.tokens
			if _, done := out["token_budget"]; !done && total > budgetMax {
				out["token_budget"] = spanWhy{s.spanID, fmt.Sprintf("%s: the tokens reach %d", s.name, total)}
			}
		}
		if !s.toolCall {
			continue
		}
		key := s.tool + "\x00" + s.args
		seen[key]++
		if _, done := out["no_loops"]; !done && seen[key] == repeatsN {
			out["no_loops"] = spanWhy{s.spanID, fmt.Sprintf("%s %s, occurrence %d", s.tool, s.args, repeatsN)}
		}
		if s.tool == readingTool {
			read = true
		}
		if _, done := out["no_key_leak"]; !done && read && strings.HasPrefix(s.tool, sendPrefix) && strings.Contains(s.args, keyPrefix) {
			out["no_key_leak"] = spanWhy{s.spanID, s.tool + " carrying the key"}
		}
	}
	return out
}

type spanWhy struct{ spanID, why string }

// row is one framework and kind in the table.
type row struct {
	played, completed, caught, wrongSpan, missed, falseAlarms, disagreements, tokenProblems int
}

// tally judges every conversation of a run and lists what fails it.
func tally(res result) (map[string]*row, []string) {
	at := res.framework
	var fails []string
	for _, p := range res.problems {
		fails = append(fails, at+": "+p)
	}
	rows := map[string]*row{}
	for _, k := range meterKinds {
		rows[k] = &row{}
	}
	col, chk := byGroup(res.collector), byGroup(res.check)
	played := map[string]bool{}
	for _, p := range res.planned {
		played[p.ID] = true
		spec, ok := kinds[p.Kind]
		if !ok || spec.expect != p.Expect {
			fails = append(fails, fmt.Sprintf("%s: %s: kind %q expects %q in kinds.js, the harness knows it as %q", at, p.ID, p.Kind, p.Expect, spec.expect))
			continue
		}
		r := rows[p.Kind]
		r.played++
		o, reported := res.outcomes[p.ID]
		if reported && o.Completed {
			r.completed++
		} else {
			fails = append(fails, fmt.Sprintf("%s: %s did not complete: %s", at, p.ID, o.Error))
		}
		conv := res.spans.conversation(p.ID)
		c := judgeOne(spec, conv, col[p.ID], chk[p.ID])
		r.caught += b2i(c.caught)
		r.wrongSpan += b2i(c.wrongSpan)
		r.missed += b2i(c.missed)
		r.falseAlarms += b2i(c.falseAlarm)
		r.disagreements += b2i(!c.agree)
		fails = append(fails, prefixed(at+": "+p.ID, c.fails)...)
		if tf := tokenFails(spec, o, conv, reported); len(tf) > 0 {
			r.tokenProblems++
			fails = append(fails, prefixed(at+": "+p.ID, tf)...)
		}
	}
	for _, vs := range []map[string][]verdict{col, chk} {
		for g := range vs {
			if !played[g] {
				fails = append(fails, fmt.Sprintf("%s: a verdict of %q, no conversation played", at, g))
			}
		}
	}
	return rows, fails
}

// judged is one conversation judged.
type judged struct {
	caught, wrongSpan, missed, falseAlarm, agree bool
	fails                                        []string
}

func judgeOne(spec kindSpec, conv []span, col, chk []verdict) judged {
	j := judged{agree: sameVerdicts(col, chk)}
	if !j.agree {
		j.fails = append(j.fails, fmt.Sprintf("the collector reported [%s], check [%s]", list(col), list(chk)))
	}
	for _, v := range col {
		if v.shutdown {
			j.fails = append(j.fails, fmt.Sprintf("%s came only at the collector's shutdown", v))
		}
	}
	want := expected(conv)
	if spec.expect == "" {
		if len(want) > 0 {
			j.fails = append(j.fails, fmt.Sprintf("the spans show %v: the script did not play as meant", slices.Sorted(maps.Keys(want))))
		}
	} else if w, ok := want[spec.expect]; !ok || len(want) != 1 {
		j.fails = append(j.fails, fmt.Sprintf("the spans show %v, not %s alone: the script did not play as meant", slices.Sorted(maps.Keys(want)), spec.expect))
	} else {
		var hits, others []verdict
		for _, v := range col {
			if v.Assertion == spec.expect {
				hits = append(hits, v)
			} else {
				others = append(others, v)
			}
		}
		switch {
		case len(hits) == 0:
			j.missed = true
			j.fails = append(j.fails, fmt.Sprintf("no %s violation came from the collector (a miss; expected at %s, %s)", spec.expect, w.spanID, w.why))
		case len(hits) == 1 && hits[0].SpanID == w.spanID:
			j.caught = true
		case len(hits) == 1:
			j.wrongSpan = true
			j.fails = append(j.fails, fmt.Sprintf("%s landed on span %s (%s), not on %s (%s)", spec.expect, hits[0].SpanID, hits[0].SpanName, w.spanID, w.why))
		default:
			j.falseAlarm = true
			j.fails = append(j.fails, fmt.Sprintf("%d %s violations where one was due: [%s]", len(hits), spec.expect, list(hits)))
		}
		if len(others) > 0 {
			j.falseAlarm = true
			j.fails = append(j.fails, fmt.Sprintf("other violations: [%s] (false alarms)", list(others)))
		}
		return j
	}
	if len(col)+len(chk) > 0 {
		j.falseAlarm = true
		j.fails = append(j.fails, fmt.Sprintf("a correct conversation, yet the collector reported [%s] and check [%s] (false alarms)", list(col), list(chk)))
	}
	return j
}

// tokenFails says what is wrong with the tokens the conversation's model
// calls recorded: each must carry what the script reported, once (one
// span a model call: a text answer ends each user turn, and each call or
// hand-off that ran took one model call).
func tokenFails(spec kindSpec, o outcome, conv []span, reported bool) []string {
	var n int
	var fails []string
	for _, s := range conv {
		if !s.hasTokens {
			continue
		}
		n++
		if s.tokens != spec.tokensPerCall {
			fails = append(fails, fmt.Sprintf("span %s (%s) carries %d tokens, the script reported %d", s.spanID, s.name, s.tokens, spec.tokensPerCall))
		}
	}
	want := 0
	if spec.tokensPerCall > 0 && reported {
		want = len(o.Ran) + userTurns
	}
	if n != want && reported {
		fails = append(fails, fmt.Sprintf("%d spans carry tokens, the conversation made %d model calls reporting them", n, want))
	}
	return fails
}

func sameVerdicts(a, b []verdict) bool {
	keys := func(vs []verdict) []string {
		out := make([]string, len(vs))
		for i, v := range vs {
			out[i] = v.key()
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(keys(a), keys(b))
}

func byGroup(vs []verdict) map[string][]verdict {
	out := map[string][]verdict{}
	for _, v := range vs {
		out[v.Group] = append(out[v.Group], v)
	}
	return out
}

func list(vs []verdict) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.String()
	}
	return strings.Join(s, ", ")
}

func prefixed(at string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = at + ": " + l
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
