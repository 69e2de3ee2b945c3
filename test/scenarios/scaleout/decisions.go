// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/verdictattr"
)

// With the conversation routing, each collector of the tier and the lone
// one also answer decisions (examples/scaleout/decisions.yaml). An agent's
// hook asks one collector of the tier, whichever, and must get the answer
// the lone collector gives: the collector that does not hold the
// conversation asks its peers. Each question is asked as a hook asks it,
// right after the conversation's last span was sent and after that span
// (after_span_id), so that the answer covers the whole conversation.

// question is a conversation and its last span.
type question struct{ conv, after string }

// action is what every question asks about: may the weather agent look up
// the weather now? (te3 answers it: after a transfer to the weather agent
// it must answer or hand on.)
const action = `{"tool": "get_weather", "arguments": {"city": "London"}}`

// lastSpans are, per conversation, the last span the requests carried.
func lastSpans(tds []ptrace.Traces) []question {
	convOf, last := map[string]string{}, map[string]string{}
	for _, td := range tds {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					if c, ok := sp.Attributes().Get("gen_ai.conversation.id"); ok {
						convOf[sp.TraceID().String()] = c.Str()
					}
				}
			}
		}
	}
	for _, td := range tds {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					if c, ok := convOf[sp.TraceID().String()]; ok {
						last[c] = sp.SpanID().String()
					}
				}
			}
		}
	}
	var out []question
	for c, s := range last {
		out = append(out, question{c, s})
	}
	slices.SortFunc(out, func(a, b question) int { return strings.Compare(a.conv, b.conv) })
	return out
}

// answer is what the comparison reads of a decision.
type answer struct {
	Decision string   `json:"decision"`
	Group    *string  `json:"group"`
	Event    int      `json:"event"`
	Stale    bool     `json:"stale"`
	Reasons  []reason `json:"reasons"`
	History  string   `json:"history"`
}

type reason struct {
	Assertion string `json:"assertion"`
	Effect    string `json:"effect"`
}

func (a answer) String() string {
	held := "not held"
	if a.Group != nil {
		held = "held"
	}
	var why []string
	for _, r := range a.Reasons {
		why = append(why, r.Assertion+":"+r.Effect)
	}
	slices.Sort(why)
	return fmt.Sprintf("%s (%s, event %d, stale %v, %s)", a.Decision, held, a.Event, a.Stale, strings.Join(why, " "))
}

// askAll asks each question of the lone collector and of one collector of
// the tier (round robin: mostly not the one that holds it), all at once,
// and lists where the two answers differ: as marked where either answer
// says its group is out_of_order (arrival raced there, as verdictProblems
// accepts), else as problems.
func askAll(single string, tier []string, qs []question) (problems, marked []string) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, q := range qs {
		wg.Go(func() {
			lone, errLone := decide(single, q)
			fromTier, errTier := decide(tier[i%len(tier)], q)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errLone != nil || errTier != nil:
				problems = append(problems, fmt.Sprintf("decision on %s: lone %v, tier %v", q.conv, errLone, errTier))
			case lone.Group == nil || lone.Stale:
				problems = append(problems, fmt.Sprintf("decision on %s: the lone collector answered %s", q.conv, lone))
			case lone.String() != fromTier.String():
				line := fmt.Sprintf("decision on %s: the tier answered %s, the lone collector %s", q.conv, fromTier, lone)
				if lone.History == verdictattr.HistoryOutOfOrder || fromTier.History == verdictattr.HistoryOutOfOrder {
					marked = append(marked, line)
				} else {
					problems = append(problems, line)
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(problems)
	slices.Sort(marked)
	return problems, marked
}

// decide asks one collector's decisions endpoint.
func decide(endpoint string, q question) (answer, error) {
	var a answer
	body := fmt.Sprintf(`{"action": %s, "after_span_id": %q}`, action, q.after)
	resp, err := http.Post("http://"+endpoint+"/v1/groups/"+url.PathEscape(q.conv)+"/decisions", "application/json", bytes.NewBufferString(body))
	if err != nil {
		return a, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return a, fmt.Errorf("status %d", resp.StatusCode)
	}
	return a, json.NewDecoder(resp.Body).Decode(&a)
}
