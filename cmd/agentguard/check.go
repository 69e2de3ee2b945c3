package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

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
}

type checkSummary struct {
	Files      int            `json:"files"`
	Spans      int            `json:"spans"`
	Results    int            `json:"results"`
	Violations int            `json:"violations"`
	ByName     map[string]int `json:"violations_by_assertion"`
}

// runCheck runs a temporalcheck processor, configured from a collector
// configuration file, over recorded OTLP/JSON traces: the gate of an agent
// release in CI. Exit 0 without violations, 1 with, 2 on bad input.
func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", "", "the collector configuration file holding the temporalcheck processor")
	name := fs.String("processor", "", "which temporalcheck processor, e.g. temporalcheck/agents (default: the only one)")
	format := fs.String("format", "text", "text or json")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	findings, sum, err := check(*config, *name, *format, fs.Args(), stderr)
	if err != nil {
		fmt.Fprintln(stderr, "agentguard check:", err)
		return 2
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"findings": findings, "summary": sum})
	} else {
		printFindings(stdout, findings, sum)
	}
	if sum.Violations > 0 {
		return 1
	}
	return 0
}

func check(config, name, format string, files []string, stderr io.Writer) ([]finding, checkSummary, error) {
	switch {
	case config == "":
		return nil, checkSummary{}, errors.New("--config is required")
	case format != "text" && format != "json":
		return nil, checkSummary{}, fmt.Errorf("--format: unknown format %q: valid values are \"text\" and \"json\"", format)
	case len(files) == 0:
		return nil, checkSummary{}, errors.New("no trace files given")
	}
	f := temporalcheck.NewFactory()
	id, cfg, err := processorConfig(config, name, f)
	if err != nil {
		return nil, checkSummary{}, err
	}
	tds, err := readTraceFiles(files)
	if err != nil {
		return nil, checkSummary{}, err
	}
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), offlineSettings(id, stderr), cfg, sink)
	if err != nil {
		return nil, checkSummary{}, fmt.Errorf("processors::%s: %w", id, err)
	}
	// Not started: Start only runs the clock that releases traces after
	// wait; offline, Shutdown releases everything at once, in start order,
	// so the verdicts do not depend on how fast the files are read.
	for _, td := range tds {
		if err := p.ConsumeTraces(context.Background(), td); err != nil {
			return nil, checkSummary{}, err
		}
	}
	if err := p.Shutdown(context.Background()); err != nil {
		return nil, checkSummary{}, err
	}
	findings := collectFindings(sink.AllTraces())
	return findings, summarize(findings, len(files), sink.SpanCount()), nil
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
			SpanName: span.Name(), Explanation: str(raw, verdictattr.Explanation),
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

func printFindings(w io.Writer, findings []finding, sum checkSummary) {
	for _, f := range findings {
		if f.Label != verdictattr.LabelFail {
			continue
		}
		fmt.Fprintf(w, "VIOLATION %s in group %s, trace %s, at span %s (%s)\n", f.Assertion, f.Group, f.TraceID, f.SpanID, f.SpanName)
		for _, line := range strings.Split(strings.TrimRight(f.Explanation, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
		fmt.Fprintln(w)
	}
	names := make([]string, 0, len(sum.ByName))
	for n, c := range sum.ByName {
		names = append(names, fmt.Sprintf("%s: %d", n, c))
	}
	slices.Sort(names)
	fmt.Fprintf(w, "%d files, %d spans, %d verdicts on spans, %d violations", sum.Files, sum.Spans, sum.Results, sum.Violations)
	if len(names) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(names, ", "))
	}
	fmt.Fprintln(w)
}
