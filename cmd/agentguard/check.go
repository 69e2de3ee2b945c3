// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"

	"github.com/agentguard/agentguard/internal/spelling"
	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/processor/temporalcheck"
)

// finding is one verdict written on a span.
type finding struct {
	Assertion   string `json:"assertion"`
	Verdict     string `json:"verdict"`
	Label       string `json:"label"`
	Group       string `json:"group"`
	StartEvent  int64  `json:"start_event"`
	EndEvent    int64  `json:"end_event"`
	TraceID     string `json:"trace_id"`
	SpanID      string `json:"span_id"`
	SpanName    string `json:"span_name"`
	Explanation string `json:"explanation"`
	// History is agentguard.history: partial or out_of_order when the
	// group's history may have been incomplete (max_traces ended it early).
	History string `json:"history,omitempty"`
	// Baseline is, with --baseline, whether the violation is "new" since
	// the baseline or "known" there.
	Baseline string `json:"baseline,omitempty"`
}

type checkSummary struct {
	Files      int            `json:"files"`
	Spans      int            `json:"spans"`
	Results    int            `json:"results"`
	Violations int            `json:"violations"`
	ByName     map[string]int `json:"violations_by_assertion"`
	Events     int            `json:"events"`
	Groups     int            `json:"groups"`
	Pending    int            `json:"pending"`
	NeverHeld  []string       `json:"never_held_predicates"`
	Warnings   int            `json:"warnings"`
	// NewViolations, with --baseline, are the violations not in it.
	NewViolations *int `json:"new_violations,omitempty"`
}

// assertionStats is what one assertion did over the input.
type assertionStats struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Expression string `json:"expression"`
	// Pattern is the pattern the assertion was written as, with its
	// parameters; Expression is then its expansion.
	Pattern string `json:"pattern,omitempty"`
	// TriggeredBy is the FIRST set: the predicates the expression can begin
	// with. EveryEvent: the expression engages at every event whatever holds.
	TriggeredBy []string `json:"triggered_by"`
	EveryEvent  bool     `json:"triggered_at_every_event"`
	Triggered   int      `json:"triggered"`
	Violations  int      `json:"violations"`
	Pending     int      `json:"pending"`
}

// predicateStats is how often a declared predicate held.
type predicateStats struct {
	Name       string `json:"name"`
	Definition string `json:"definition"`
	Held       int    `json:"held"`
}

// checkReport is check's output. Lists are never null.
type checkReport struct {
	Findings   []finding        `json:"findings"`
	Pending    []pendingVerdict `json:"pending"`
	Assertions []assertionStats `json:"assertions"`
	Predicates []predicateStats `json:"predicates"`
	// Warnings are why the run proves less than its verdicts say: pending
	// verdicts, predicates that never held, no events at all, OTTL errors,
	// spans not checked. --strict fails the run on any.
	Warnings []string     `json:"warnings"`
	Summary  checkSummary `json:"summary"`
	// For the SARIF and JUnit outputs: the file each trace came from (by
	// trace ID) and the groups judged.
	fileOf map[string]string
	groups []string
}

// exitStrict is check's exit code when --strict fails a run that has no
// violation but warnings: apart from 1, so that CI can tell "the agent broke
// a rule" from "the gate could not judge this run".
const exitStrict = 3

const checkSynopsis = "--config COLLECTOR.yaml [--processor temporalcheck/NAME] [--format text|json|sarif|junit] [--baseline REPORT.json] [--strict] FILES..."

const checkHelp = `Runs the temporalcheck processor of the configuration over recorded OTLP/JSON traces
(one ExportTraceServiceRequest per file, or one per line) and prints every violation, the
pending verdicts (evaluations still waiting when their group ended: what for), how often
each assertion was triggered (at events where a predicate its expression can begin with
holds; ok + x and the like engage at every event), and how often each predicate held.
It warns, on stderr, about pending verdicts, predicates that never held, input without
events, OTTL errors and spans left unchecked.

Exit status: 0 no violation; 1 a violation; 2 a usage or input error; 3 no violation, but
--strict and at least one warning.

`

// runCheck runs a temporalcheck processor, configured from a collector
// configuration file, over recorded OTLP/JSON traces: the gate of an agent
// release in CI.
func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("check", checkSynopsis, stderr)
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprint(stderr, "\n"+checkHelp)
	}
	config := fs.String("config", "", "the collector configuration `file` holding the temporalcheck processor")
	name := fs.String("processor", "", "which temporalcheck processor, e.g. temporalcheck/agents (default: the only one)")
	format := fs.String("format", "text", "text, json, sarif (code scanning: one result per violation) or junit (CI test reports: a test case per group and assertion)")
	baseline := fs.String("baseline", "", "a previous `report` of check --format json: exit 1 only on violations not in it")
	strict := fs.Bool("strict", false, "fail the run (exit 3) on any warning: pending verdicts, predicates that never held, no events, OTTL errors, unchecked spans")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rep, err := check(*config, *name, *format, fs.Args(), stderr)
	if err == nil && *baseline != "" {
		var known map[string]bool
		if known, err = loadBaseline(*baseline); err == nil {
			applyBaseline(rep, known)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "agentguard check:", err)
		return 2
	}
	if err := writeReport(stdout, *format, rep); err != nil {
		fmt.Fprintln(stderr, "agentguard check:", err)
		return 2
	}
	for _, w := range rep.Warnings {
		fmt.Fprintln(stderr, "agentguard check: warning:", w)
	}
	switch {
	case rep.Summary.NewViolations != nil && *rep.Summary.NewViolations > 0:
		return 1
	case rep.Summary.NewViolations == nil && rep.Summary.Violations > 0:
		return 1
	case *strict && len(rep.Warnings) > 0:
		fmt.Fprintf(stderr, "agentguard check: --strict: %s fail the run\n", plural(len(rep.Warnings), "warning"))
		return exitStrict
	}
	return 0
}

func check(config, name, format string, files []string, stderr io.Writer) (*checkReport, error) {
	switch {
	case config == "":
		return nil, errors.New("--config is required")
	case !slices.Contains(checkFormats, format):
		return nil, fmt.Errorf("--format: unknown format %q: valid values are %q", format, checkFormats)
	case len(files) == 0:
		return nil, errors.New("no trace files given")
	}
	f := temporalcheck.NewFactory()
	id, raw, err := processorConfig(config, name, f)
	if err != nil {
		return nil, err
	}
	cfg := raw.(*temporalcheck.Config)
	tds, fileOf, err := readTraceFilesOf(files)
	if err != nil {
		return nil, err
	}
	// The replay reads the spans as they came: the processor writes its
	// verdicts on the ones it passes on.
	received := copyTraces(tds)
	sink, counts, err := runProcessor(f, id, cfg, tds, stderr)
	if err != nil {
		return nil, err
	}
	findings := collectFindings(sink.AllTraces())
	r, err := replayCheck(id, cfg, sink.AllTraces(), received)
	if err != nil {
		return nil, err
	}
	rep := report(cfg, findings, summarize(findings, len(files), sink.SpanCount()), r, counts)
	rep.fileOf, rep.groups = fileOf, r.groupKeys
	return rep, nil
}

// checkFormats are check's outputs.
var checkFormats = []string{"text", "json", "sarif", "junit"}

// writeReport writes the report in format.
func writeReport(w io.Writer, format string, rep *checkReport) error {
	switch format {
	case "json":
		return writeJSON(w, rep)
	case "sarif":
		return writeJSON(w, sarifLog(rep))
	case "junit":
		return writeJUnit(w, rep)
	}
	printReport(w, rep)
	return nil
}

// writeJSON writes v indented, with >> and & as they are (expressions).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// runProcessor passes the traces through the processor; the sink holds
// what it passed on, in order, and the counts are the processor's own.
func runProcessor(f processor.Factory, id component.ID, cfg component.Config, tds []ptrace.Traces, stderr io.Writer) (*consumertest.TracesSink, processorCounts, error) {
	sink := new(consumertest.TracesSink)
	set := offlineSettings(id, stderr)
	meter, reader := countingMeter()
	set.MeterProvider = meter
	p, err := f.CreateTraces(context.Background(), set, cfg, sink)
	if err != nil {
		return nil, processorCounts{}, fmt.Errorf("processors::%s: %w", id, err)
	}
	// Not started: Start only runs the clock that releases traces after
	// wait; offline, Shutdown releases everything at once, in start order,
	// so the verdicts do not depend on how fast the files are read.
	for _, td := range tds {
		if err := p.ConsumeTraces(context.Background(), td); err != nil {
			return nil, processorCounts{}, err
		}
	}
	if err := p.Shutdown(context.Background()); err != nil {
		return nil, processorCounts{}, err
	}
	counts, err := collect(reader)
	return sink, counts, err
}

// copyTraces copies each batch.
func copyTraces(tds []ptrace.Traces) []ptrace.Traces {
	out := make([]ptrace.Traces, len(tds))
	for i, td := range tds {
		out[i] = ptrace.NewTraces()
		td.CopyTo(out[i])
	}
	return out
}

// report puts the processor's findings and counts and the replay's pending
// verdicts together.
func report(cfg *temporalcheck.Config, findings []finding, sum checkSummary, r *replayed, pc processorCounts) *checkReport {
	rep := &checkReport{Findings: findings, Pending: r.pending, Assertions: []assertionStats{}, Predicates: []predicateStats{}, Warnings: []string{}}
	if rep.Findings == nil {
		rep.Findings = []finding{}
	}
	names := make([]string, len(cfg.Predicates))
	for i, p := range cfg.Predicates {
		names[i] = p.Name
		rep.Predicates = append(rep.Predicates, predicateStats{Name: p.Name, Definition: definition(p.Predicate), Held: pc.held[p.Name]})
	}
	pendingBy := map[string]int{}
	for _, p := range r.pending {
		pendingBy[p.Assertion]++
	}
	for i, a := range r.compiled {
		rep.Assertions = append(rep.Assertions, assertionStats{Name: a.Name, Kind: a.Kind, Expression: a.Expression, Pattern: a.Pattern,
			TriggeredBy: r.triggeredBy(i, names), EveryEvent: r.triggers[i].any, Triggered: pc.triggered[a.Name],
			Violations: sum.ByName[a.Name], Pending: pendingBy[a.Name]})
	}
	sum.Events, sum.Groups, sum.Pending, sum.NeverHeld = pc.events, r.groups, len(r.pending), []string{}
	warn := func(format string, args ...any) { rep.Warnings = append(rep.Warnings, fmt.Sprintf(format, args...)) }
	if pc.events == 0 {
		warn("no events: the events condition selected none of the %s read, so no assertion checked anything", plural(sum.Spans, "span"))
	}
	literals, optional := cfg.Config.Literals(), cfg.Config.OptionalNames()
	// A capture that never binds explains its predicate's never holding:
	// that warning, with the path's did-you-mean, replaces the predicate's.
	explained := map[string]bool{}
	for _, c := range r.captures.Suspects() {
		explained[c.Predicate] = true
		if !optional[c.Predicate] {
			warn("predicate %s captures %s, absent from all %s of %s read: the capture never binds, so the predicate never holds%s",
				c.Predicate, c.From, plural(c.Calls, "call"), c.Tool, spelling.DidYouMean(c.From, c.Seen))
		}
	}
	for _, q := range r.quantities.Suspects() {
		warn("predicate %s: no span of the %s read carried %s, so the budget never adds anything and cannot hold; check the attribute key%s",
			q.Predicate, plural(sum.Spans, "span"), q.Quantity, spelling.DidYouMean(q.Quantity, q.Seen))
	}
	for _, p := range rep.Predicates {
		if p.Held == 0 {
			sum.NeverHeld = append(sum.NeverHeld, p.Name)
			if pc.events > 0 && !optional[p.Name] && !explained[p.Name] {
				lit, ok := literals[p.Name]
				hint := r.misspelt(lit, ok)
				if !ok {
					hint = r.misspeltKey(p.Definition)
				}
				warn("predicate %s (%s) never held on the %s read%s", p.Name, p.Definition, plural(pc.events, "event"), hint)
			}
		}
	}
	if n := unprovenPending(r); n > 0 {
		warn("%s: evaluations still waiting when their group ended prove nothing; if the conversation must finish them, set on_end: fail (they become violations)",
			plural(n, "pending verdict"))
	}
	if r.ottlErrors > 0 {
		warn("%s: those predicates count as false at those spans", plural(r.ottlErrors, "OTTL evaluation error"))
	}
	if r.lateSpans > 0 {
		warn("%s arrived after their trace, a group of its own, was released and passed unchecked (raise max_traces or max_spans_per_trace)", plural(r.lateSpans, "span"))
	}
	if cfg.GroupBy != temporalcheck.GroupByTrace && !r.grouped && pc.events > 0 {
		warn("group_by %q: no trace carried it, so every trace was a group of its own%s", cfg.GroupBy, spelling.DidYouMean(cfg.GroupBy, r.keys))
	}
	if r.violations != sum.Violations {
		warn("the replay that lists pending verdicts found %s, the processor %d: the pending verdicts may not match the verdicts",
			plural(r.violations, "violation"), sum.Violations)
	}
	sum.Warnings = len(rep.Warnings)
	rep.Summary = sum
	return rep
}

// unprovenPending counts the pending verdicts that leave a question open.
// A never assertion's pending evaluation is a forbidden sequence begun and
// not completed when its group ended (a bounded look-ahead that ran out):
// that is the assertion holding, not a doubt.
func unprovenPending(r *replayed) int {
	never := map[string]bool{}
	for _, a := range r.compiled {
		never[a.Name] = a.Kind == "never"
	}
	n := 0
	for _, p := range r.pending {
		if !never[p.Assertion] {
			n++
		}
	}
	return n
}

func collectFindings(tds []ptrace.Traces) []finding {
	var out []finding
	for _, td := range tds {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, span := range ss.Spans().All() {
					out = append(out, spanFindings(span)...)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b finding) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Assertion, b.Assertion),
			cmp.Compare(a.StartEvent, b.StartEvent), cmp.Compare(a.EndEvent, b.EndEvent))
	})
	return out
}

func spanFindings(span ptrace.Span) []finding {
	var out []finding
	for _, ev := range span.Events().All() {
		a := ev.Attributes()
		if ev.Name() != verdictattr.EvaluationEvent || str(a.AsRaw(), verdictattr.Check) != verdictattr.CheckTemporal {
			continue
		}
		raw := a.AsRaw()
		start, _ := raw[verdictattr.StartEvent].(int64)
		end, _ := raw[verdictattr.EndEvent].(int64)
		out = append(out, finding{
			Assertion: str(raw, verdictattr.EvaluationName), Verdict: str(raw, verdictattr.Verdict),
			Label: str(raw, verdictattr.ScoreLabel), Group: str(raw, verdictattr.Group),
			StartEvent: start, EndEvent: end, TraceID: span.TraceID().String(), SpanID: span.SpanID().String(),
			SpanName: span.Name(), Explanation: str(raw, verdictattr.Explanation), History: str(raw, verdictattr.History),
		})
	}
	return out
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func summarize(findings []finding, files, spans int) checkSummary {
	sum := checkSummary{Files: files, Spans: spans, Results: len(findings), ByName: map[string]int{}}
	for _, f := range findings {
		if f.Label == verdictattr.LabelFail {
			sum.Violations++
			sum.ByName[f.Assertion]++
		}
	}
	return sum
}

// maxPendingListed bounds the pending verdicts the text report lists; the
// JSON report lists them all.
const maxPendingListed = 50

func printReport(w io.Writer, rep *checkReport) {
	sum := rep.Summary
	for _, f := range rep.Findings {
		if f.Label != verdictattr.LabelFail {
			continue
		}
		fmt.Fprintf(w, "VIOLATION %s in group %s, trace %s, at span %s (%s)", f.Assertion, f.Group, f.TraceID, f.SpanID, f.SpanName)
		if f.History != "" {
			fmt.Fprintf(w, " [history %s]", f.History)
		}
		if f.Baseline != "" {
			fmt.Fprintf(w, " [%s]", f.Baseline)
		}
		fmt.Fprintln(w)
		for _, line := range strings.Split(strings.TrimRight(f.Explanation, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
		fmt.Fprintln(w)
	}
	for i, p := range rep.Pending {
		if i == maxPendingListed {
			fmt.Fprintf(w, "... and %d more pending verdicts (--format json lists them all)\n", len(rep.Pending)-i)
			break
		}
		fmt.Fprintf(w, "PENDING %s in group %s", p.Assertion, p.Group)
		if p.SpanName != "" {
			fmt.Fprintf(w, ", trace %s, from event %d of %d at span %s (%s)", p.TraceID, p.StartEvent, p.LastEvent, p.SpanID, p.SpanName)
		} else {
			fmt.Fprintf(w, ", from event %d of %d", p.StartEvent, p.LastEvent)
		}
		if len(p.WaitingFor) > 0 {
			fmt.Fprintf(w, ": still waiting for %s", strings.Join(p.WaitingFor, "; "))
		}
		fmt.Fprintln(w)
	}
	if len(rep.Pending) > 0 {
		fmt.Fprintln(w)
	}
	for _, a := range rep.Assertions {
		by := "starts with " + strings.Join(a.TriggeredBy, ", ")
		switch {
		case a.Kind == "initially":
			by = "the first event of each sequence only"
		case a.EveryEvent:
			by = "every event"
		case len(a.TriggeredBy) == 0:
			by = "no event: its outcome does not depend on the events"
		}
		fmt.Fprintf(w, "%s: triggered at %d of %s (%s), %s, %d pending\n", a.Name, a.Triggered, plural(sum.Events, "event"),
			by, plural(a.Violations, "violation"), a.Pending)
	}
	held := make([]string, len(rep.Predicates))
	for i, p := range rep.Predicates {
		held[i] = fmt.Sprintf("%s %d", p.Name, p.Held)
	}
	fmt.Fprintf(w, "predicates held at (of %s): %s\n", plural(sum.Events, "event"), orNone(held))
	names := make([]string, 0, len(sum.ByName))
	for n, c := range sum.ByName {
		names = append(names, fmt.Sprintf("%s: %d", n, c))
	}
	slices.Sort(names)
	fmt.Fprintf(w, "%d files, %d spans, %d verdicts on spans, %d violations", sum.Files, sum.Spans, sum.Results, sum.Violations)
	if len(names) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(names, ", "))
	}
	if sum.NewViolations != nil {
		fmt.Fprintf(w, ", %d new since the baseline", *sum.NewViolations)
	}
	fmt.Fprintln(w)
}
