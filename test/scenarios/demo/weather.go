// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/test/sim/weather"
)

// summarizeWeather prints, per conversation, what went wrong and what the
// collector reported, then the earliest violation of each conversation in
// full, as its log record's body says.
func summarizeWeather(w io.Writer, convs []weather.Conversation, recs []plog.LogRecord) {
	byGroup := map[string][]plog.LogRecord{}
	for _, r := range recs {
		g, _ := r.Attributes().Get(verdictattr.Group)
		byGroup[g.Str()] = append(byGroup[g.Str()], r)
	}
	caught, missed, falseAlarms := 0, 0, 0
	for _, c := range convs {
		sortByEvents(byGroup[c.ID])
		fmt.Fprintf(w, "  %-9s %-30s violations: %s\n", c.ID, mistake(c), orNone(assertionNames(byGroup[c.ID])))
		switch n := len(byGroup[c.ID]); {
		case c.Faulty() && n > 0:
			caught++
		case c.Faulty():
			missed++
		case n > 0:
			falseAlarms++
		}
	}
	fmt.Fprintf(w, "\n%d verdict log records; faulty conversations caught: %d, missed: %d; false alarms: %d\n", len(recs), caught, missed, falseAlarms)
	for _, c := range convs {
		if rs := byGroup[c.ID]; len(rs) > 0 {
			fmt.Fprintf(w, "\n%s (%s), earliest violation, %s:\n%s", c.ID, mistake(c), where(rs[0]), indent(rs[0].Body().Str()))
		}
	}
}

func mistake(c weather.Conversation) string {
	switch {
	case c.KeepsControl:
		return "greeting agent keeps control"
	case c.BadHello:
		return "greeting agent hands to itself"
	case c.BadGoodbye:
		return "farewell agent hands to itself"
	}
	return "behaved"
}

// where says which span the verdict was written on: an event's, or the
// verdict span of a conversation that ended after its spans had left.
func where(r plog.LogRecord) string {
	name, _ := r.Attributes().Get(verdictattr.SpanName)
	if name.Str() == "agentguard verdict" {
		return "decided when the conversation ended (a verdict span)"
	}
	return "on span " + name.Str()
}

// sortByEvents orders a conversation's verdicts by the event that decided
// them, then the one they began at: the earliest first.
func sortByEvents(recs []plog.LogRecord) {
	ev := func(r plog.LogRecord, k string) int64 { v, _ := r.Attributes().Get(k); return v.Int() }
	sort.SliceStable(recs, func(i, j int) bool {
		ei, ej := ev(recs[i], verdictattr.EndEvent), ev(recs[j], verdictattr.EndEvent)
		if ei != ej {
			return ei < ej
		}
		return ev(recs[i], verdictattr.StartEvent) < ev(recs[j], verdictattr.StartEvent)
	})
}

func assertionNames(recs []plog.LogRecord) []string {
	var names []string
	for _, r := range recs {
		n, _ := r.Attributes().Get(verdictattr.EvaluationName)
		s, _ := r.Attributes().Get(verdictattr.StartEvent)
		e, _ := r.Attributes().Get(verdictattr.EndEvent)
		names = append(names, fmt.Sprintf("%s (events %d-%d)", n.Str(), s.Int(), e.Int()))
	}
	return names
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}
