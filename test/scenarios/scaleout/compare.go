// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/verdictattr"
)

// verdict is a verdict log record as the tier and the single collector must
// both report it: the same input bytes give the same trace IDs, so
// everything down to the trace, the span and the explanation must agree.
type verdict struct {
	Check, Group, Assertion, Verdict, Label string
	Start, End                              int64
	TraceID, SpanName                       string
	Explanation                             string
	History                                 string // agentguard.history: partial, out_of_order or ""
	spanID                                  string // a verdict span's is the collector's own: not compared
}

func (v verdict) String() string {
	s := fmt.Sprintf("%s %s %s %s (%s) events %d-%d trace %s on %q", v.Check, v.Group, v.Assertion, v.Verdict, v.Label, v.Start, v.End, v.TraceID, v.SpanName)
	if v.History != "" {
		s += " marked " + v.History
	}
	return s
}

func compareVerdicts(a, b verdict) int {
	return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Assertion, b.Assertion),
		cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End), strings.Compare(a.Verdict, b.Verdict),
		strings.Compare(a.TraceID, b.TraceID), strings.Compare(a.SpanName, b.SpanName),
		strings.Compare(a.Label, b.Label), strings.Compare(a.Check, b.Check), strings.Compare(a.Explanation, b.Explanation),
		strings.Compare(a.History, b.History))
}

// verdictsOf are the records as verdicts, sorted.
func verdictsOf(recs []plog.LogRecord) []verdict {
	out := make([]verdict, 0, len(recs))
	for _, r := range recs {
		a := r.Attributes()
		s := func(k string) string {
			if v, ok := a.Get(k); ok {
				return v.AsString()
			}
			return ""
		}
		n := func(k string) int64 { v, _ := a.Get(k); return v.Int() }
		tid, sid := r.TraceID(), r.SpanID()
		out = append(out, verdict{Check: s(verdictattr.Check), Group: s(verdictattr.Group), Assertion: s(verdictattr.EvaluationName),
			Verdict: s(verdictattr.Verdict), Label: s(verdictattr.ScoreLabel), Start: n(verdictattr.StartEvent), End: n(verdictattr.EndEvent),
			TraceID: fmt.Sprintf("%x", tid[:]), SpanName: s(verdictattr.SpanName), Explanation: r.Body().AsString(),
			History: s(verdictattr.History), spanID: fmt.Sprintf("%x", sid[:])})
	}
	slices.SortFunc(out, compareVerdicts)
	return out
}

// diffVerdicts are the verdicts only one side reported (each counted as
// often as it was reported).
func diffVerdicts(single, tier []verdict) (onlySingle, onlyTier []verdict) {
	i, j := 0, 0
	for i < len(single) || j < len(tier) {
		switch {
		case j == len(tier) || i < len(single) && compareVerdicts(single[i], tier[j]) < 0:
			onlySingle = append(onlySingle, single[i])
			i++
		case i == len(single) || compareVerdicts(single[i], tier[j]) > 0:
			onlyTier = append(onlyTier, tier[j])
			j++
		default:
			i++
			j++
		}
	}
	return onlySingle, onlyTier
}

// verdictProblems are the verdicts only one side reported, or none at all.
// A difference on a group either side marked out_of_order is not one: the
// mark says that collector judged a trace of the group after a later one,
// as arrival timing may make it on either side, so its verdicts may differ,
// and say so. Those differences are returned as marked, unless a side
// reported the verdict twice (a delivery defect, not a race). A partial mark excuses nothing: no collector
// restarts here, so it comes from a defect (a failed hand-over, max_traces).
func verdictProblems(single, tier []verdict) (problems, marked []string) {
	onlySingle, onlyTier := diffVerdicts(single, tier)
	raced := racedGroups(single, tier)
	report := func(side string, vs, other []verdict) {
		for i, v := range vs {
			line := "only the " + side + " reported " + v.String()
			_, twice := slices.BinarySearchFunc(other, v, compareVerdicts)
			twice = twice || i > 0 && compareVerdicts(vs[i-1], v) == 0 || i+1 < len(vs) && compareVerdicts(vs[i+1], v) == 0
			if raced[v.Group] && !twice {
				marked = append(marked, line)
			} else {
				problems = append(problems, line)
			}
		}
	}
	report("single collector", onlySingle, tier)
	report("tier", onlyTier, single)
	if len(single) == 0 {
		problems = append(problems, "no verdict at all: nothing to compare")
	}
	// The scenario sends each conversation's traces in order: a mark is a
	// race on arrival, and a collector marking many groups has a defect.
	if all := len(groupsOf(single, tier)); len(raced) > all/4 {
		problems = append(problems, fmt.Sprintf("%d of the %d groups with a verdict marked out_of_order: more than arrival races explain", len(raced), all))
	}
	return problems, marked
}

// racedGroups are the groups with a verdict marked out_of_order on either
// side.
func racedGroups(sides ...[]verdict) map[string]bool {
	return groupsWhere(func(v verdict) bool { return v.History == verdictattr.HistoryOutOfOrder }, sides...)
}

// groupsOf are the groups with a verdict on either side.
func groupsOf(sides ...[]verdict) map[string]bool {
	return groupsWhere(func(verdict) bool { return true }, sides...)
}

func groupsWhere(keep func(verdict) bool, sides ...[]verdict) map[string]bool {
	groups := map[string]bool{}
	for _, side := range sides {
		for _, v := range side {
			if keep(v) {
				groups[v.Group] = true
			}
		}
	}
	return groups
}

// spansByTrace counts the spans of each trace (hex ID).
func spansByTrace(tds []ptrace.Traces) map[string]int {
	n := map[string]int{}
	for _, td := range tds {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					tid := s.TraceID()
					n[fmt.Sprintf("%x", tid[:])]++
				}
			}
		}
	}
	return n
}

// sampling is what the sampler tier kept.
type sampling struct {
	violating, violatingKept int // traces with a violation verdict, and those kept whole
	rest, restKept           int // the other traces, and those kept whole
	problems                 []string
}

// judgeSampling compares what the sampler passed on (out, spans by trace)
// with what went in (in) and which traces violate: every violating trace
// kept whole (with its verdict spans), some but not all of the others, and
// none in part.
func judgeSampling(in, out map[string]int, violating map[string]bool) sampling {
	var s sampling
	for t, n := range in {
		kept := out[t]
		switch {
		case violating[t]:
			s.violating++
			if kept >= n {
				s.violatingKept++
			} else {
				s.problems = append(s.problems, fmt.Sprintf("violating trace %s: %d of its %d spans kept", t, kept, n))
			}
		default:
			s.rest++
			switch kept {
			case 0:
			case n:
				s.restKept++
			default:
				s.problems = append(s.problems, fmt.Sprintf("trace %s: %d of its %d spans kept", t, kept, n))
			}
		}
	}
	for t := range violating {
		if in[t] == 0 {
			s.problems = append(s.problems, fmt.Sprintf("a violation on trace %s, which was not sent", t))
		}
	}
	if s.rest > 0 && (s.restKept == 0 || s.restKept == s.rest) {
		s.problems = append(s.problems, fmt.Sprintf("%d of the %d traces without a violation kept: want a sample", s.restKept, s.rest))
	}
	slices.Sort(s.problems)
	return s
}
