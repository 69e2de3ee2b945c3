// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/core/sequence"
)

// runEvaluate replays held-out traces through the processor's decisions at
// several thresholds and measures, per θ, how many unsafe runs were warned
// before their unsafe event, how early, and how many safe runs were warned
// for nothing: the ProbGuard paper's tables. Then it sweeps θ over every
// value where a decision changes (the Pareto front of warned in time against
// false alarms, with the lead's distribution), compares each state's P_safe
// with what became of the groups there (calibration, Brier score), suggests
// θ for a target false-alarm rate, and draws all of it as an SVG. Exit 0.
func runEvaluate(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("evaluate", "--config COLLECTOR.yaml [--processor probguard/NAME] [--model MODEL.json] [--thresholds 0.3,0.5,0.7,0.9] [--target-false-alarms 0.1] [--svg FILE.svg] [--format markdown|text|json] FILES...", stderr)
	var o evaluateOptions
	o.register(fs)
	fs.StringVar(&o.model, "model", "", "the JSON model `file` (default: the processor's model:, relative to the current directory as the collector opens it)")
	fs.StringVar(&o.thresholds, "thresholds", "0.3,0.5,0.7,0.9", "the `thresholds` θ to try, comma-separated, each in (0, 1]")
	fs.StringVar(&o.format, "format", "markdown", "the output `format`: markdown, text or json")
	fs.StringVar(&o.target, "target-false-alarms", "", "suggest the θ that warns the most unsafe runs in time with at most this `rate` of safe runs warned, in [0, 1]")
	fs.StringVar(&o.svg, "svg", "", "write the Pareto front, the lead and the calibration as an SVG picture to this `file`")
	fs.IntVar(&o.samples, "samples", 400, "chains drawn from the model's posterior for the calibration's credible intervals (the processor's uncertainty.samples when set); 0: none")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o.files = fs.Args()
	ev, err := evaluate(o, stderr)
	if err == nil {
		err = ev.write(stdout, o.format)
	}
	if err == nil && o.svg != "" {
		err = writeSVGFile(o.svg, ev)
	}
	if err != nil {
		fmt.Fprintln(stderr, "agentguard evaluate:", err)
		return 2
	}
	return 0
}

type evaluateOptions struct {
	processorFlags
	model, thresholds, format string
	target, svg               string
	targetRate                float64 // target parsed; -1 without one
	samples                   int
	files                     []string
}

// evaluation is evaluate's output: the runs, then a row per threshold.
type evaluation struct {
	Processor string         `json:"processor"`
	Model     string         `json:"model"`
	Runs      int            `json:"runs"`
	Unsafe    int            `json:"unsafe_runs"`
	Safe      int            `json:"safe_runs"`
	Rows      []thresholdRow `json:"thresholds"`
	// Configured is the processor's θ, marked in the picture.
	Configured  float64      `json:"configured_threshold"`
	Sweep       []sweepPoint `json:"sweep"`
	Calibration *calibration `json:"calibration"`
	Suggestion  *suggestion  `json:"suggestion,omitempty"`
}

// thresholdRow is one threshold's row of the table. The means are over the
// unsafe runs warned in time, nil without any.
type thresholdRow struct {
	Threshold       float64  `json:"threshold"`
	Warned          int      `json:"unsafe_runs_warned_in_time"`
	MeanLeadEvents  *float64 `json:"mean_lead_events"`
	MeanLeadSeconds *float64 `json:"mean_lead_seconds"`
	FalseAlarms     int      `json:"safe_runs_warned"`
	UnknownAlerts   int      `json:"unknown_state_alerts"`
	UnknownRuns     int      `json:"runs_with_unknown_state_alerts"`
}

func evaluate(o evaluateOptions, stderr io.Writer) (*evaluation, error) {
	thresholds, err := o.validate()
	if err != nil {
		return nil, err
	}
	if o.targetRate, err = parseTarget(o.target); err != nil {
		return nil, err
	}
	id, cfg, err := readProbguardConfig(o.config, o.name)
	if err != nil {
		return nil, err
	}
	path, m, err := servedModel(cfg, o.model, stderr)
	if err != nil {
		return nil, err
	}
	in, err := readGroups("evaluate", id, cfg, o.files, stderr)
	if err != nil {
		return nil, err
	}
	// Without a run every row would read 0/0: a table that measures nothing.
	if err := in.requireEvents(cfg.Config, "to evaluate"); err != nil {
		return nil, err
	}
	in.warnNeverHeld(stderr, "evaluate", cfg.Predicates)
	runs := runsOf(in)
	ev := &evaluation{Processor: id.String(), Model: path, Runs: len(runs)}
	for _, theta := range thresholds {
		opts := cfg.GuardOptions()
		opts.Threshold = theta
		row, unsafe, err := evaluateAt(m, opts, runs)
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", path, err)
		}
		// Whether a run is unsafe does not depend on θ; its warnings do.
		ev.Unsafe, ev.Safe = unsafe, len(runs)-unsafe
		ev.Rows = append(ev.Rows, row)
	}
	ev.Configured = cfg.GuardOptions().Threshold
	opts := cfg.GuardOptions()
	if opts.Posterior.Samples == 0 && opts.Property.Kind != dtmc.Response {
		opts.Posterior.Samples = o.samples
	}
	g, err := newGuard(m, opts)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	scored := scoreRuns(g, runs)
	ev.Sweep = sweep(scored)
	ev.Calibration = calibrate(g, scored)
	if o.targetRate >= 0 {
		ev.Suggestion = suggest(ev.Sweep, ev.Safe, o.targetRate)
	}
	return ev, nil
}

// parseTarget reads --target-false-alarms; -1 when it is not given.
func parseTarget(s string) (float64, error) {
	if s == "" {
		return -1, nil
	}
	r, err := strconv.ParseFloat(s, 64)
	if err != nil || !(r >= 0 && r <= 1) {
		return 0, fmt.Errorf("--target-false-alarms: %q is not a rate in [0, 1]", s)
	}
	return r, nil
}

// validate checks the flags and returns the thresholds.
func (o evaluateOptions) validate() ([]float64, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	thresholds, err := parseThresholds(o.thresholds)
	switch {
	case err != nil:
		return nil, err
	case o.format != "markdown" && o.format != "text" && o.format != "json":
		return nil, fmt.Errorf("--format: unknown format %q: valid values are \"markdown\", \"text\" and \"json\"", o.format)
	case len(o.files) == 0:
		return nil, errors.New("no trace files given")
	}
	return thresholds, nil
}

func parseThresholds(list string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(list, ",") {
		theta, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(theta > 0 && theta <= 1) {
			return nil, fmt.Errorf("--thresholds: %q is not a probability in (0, 1]", f)
		}
		out = append(out, theta)
	}
	return out, nil
}

// runsOf is every group with events: a group is one run of the guard.
func runsOf(in traceInput) [][]sequence.Event {
	var runs [][]sequence.Event
	for _, g := range in.groups {
		if len(g.Events) > 0 {
			runs = append(runs, g.Events)
		}
	}
	return runs
}

// evaluateAt replays every run through a guard with these options, a fresh
// guard.Run each, as the processor scores a new group.
func evaluateAt(m *dtmc.Model, opts guard.Options, runs [][]sequence.Event) (row thresholdRow, unsafe int, err error) {
	g, err := newGuard(m, opts)
	if err != nil {
		return row, 0, err
	}
	row.Threshold = opts.Threshold
	var leadEvents, leadSeconds float64
	for _, evs := range runs {
		o := replay(g, evs)
		if o.unknown > 0 {
			row.UnknownAlerts += o.unknown
			row.UnknownRuns++
		}
		switch {
		case o.unsafe:
			unsafe++
			if o.warned {
				row.Warned++
				leadEvents += float64(o.leadEvents)
				leadSeconds += o.leadSeconds
			}
		case o.warned:
			row.FalseAlarms++
		}
	}
	if row.Warned > 0 {
		e, s := leadEvents/float64(row.Warned), leadSeconds/float64(row.Warned)
		row.MeanLeadEvents, row.MeanLeadSeconds = &e, &s
	}
	return row, unsafe, nil
}

// outcome is what the guard decided along one run.
type outcome struct {
	unsafe bool // some event is a violation
	// warned: a warning (P_safe below θ) came before the first violation,
	// or, in a safe run, at all.
	warned      bool
	leadEvents  int     // from the first warning to the first violation
	leadSeconds float64 // the same, between the spans' start times
	unknown     int     // unknown-state alerts
}

// replay decides at every event of a run. A warning is a reported event that
// is neither the violation itself nor an unknown state, whose alert does not
// predict anything and is counted apart.
func replay(g *guard.Guard, evs []sequence.Event) outcome {
	var o outcome
	var run guard.Run
	firstUnsafe, firstWarning := -1, -1
	for i, ev := range evs {
		d := g.Step(&run, ev.Bits)
		switch {
		case d.Violation:
			if firstUnsafe < 0 {
				firstUnsafe = i
			}
		case !d.Report:
		case !d.Known:
			o.unknown++
		case firstWarning < 0:
			firstWarning = i
		}
	}
	o.unsafe = firstUnsafe >= 0
	o.warned = firstWarning >= 0 && (!o.unsafe || firstWarning < firstUnsafe)
	if o.unsafe && o.warned {
		o.leadEvents = firstUnsafe - firstWarning
		o.leadSeconds = evs[firstUnsafe].Start.AsTime().Sub(evs[firstWarning].Start.AsTime()).Seconds()
	}
	return o
}

func (ev *evaluation) write(w io.Writer, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(ev)
	case "text":
		return ev.writeTable(w, false)
	}
	return ev.writeTable(w, true)
}

var evaluationColumns = []string{"θ", "unsafe runs warned in time", "mean lead (events)", "mean lead (s)", "false alarms on safe runs", "unknown-state alerts"}

// writeTable writes the thresholds' rows, the Pareto front, the calibration
// and the suggestion as markdown tables, or as aligned text.
func (ev *evaluation) writeTable(w io.Writer, markdown bool) error {
	fmt.Fprintf(w, "runs: %d (%d unsafe, %d safe); %s, model %s\n\n", ev.Runs, ev.Unsafe, ev.Safe, ev.Processor, ev.Model)
	rows := [][]string{evaluationColumns}
	for _, r := range ev.Rows {
		rows = append(rows, []string{strconv.FormatFloat(r.Threshold, 'g', -1, 64), share(r.Warned, ev.Unsafe),
			mean(r.MeanLeadEvents, 2), mean(r.MeanLeadSeconds, 1), share(r.FalseAlarms, ev.Safe), alerts(r.UnknownAlerts, r.UnknownRuns)})
	}
	if err := writeRows(w, rows, markdown); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nPareto front of warned in time against false alarms (θ swept over the %d intervals where a decision changes):\n\n", len(ev.Sweep))
	rows = [][]string{{"θ", "decides as", "unsafe runs warned in time", "false alarms on safe runs", "lead (events) min/p10/p50/p90/max", "lead (s) p10/p50/p90"}}
	for _, p := range ev.Sweep {
		if p.Pareto {
			rows = append(rows, []string{formatTheta(p), describeInterval(p), share(p.Warned, ev.Unsafe), share(p.FalseAlarms, ev.Safe), leadEvents(p.Lead), leadSeconds(p.Lead)})
		}
	}
	if err := writeRows(w, rows, markdown); err != nil {
		return err
	}
	c := ev.Calibration
	fmt.Fprintf(w, "\nCalibration of P_safe (each group once a state, at its first visit before any violation; observed: the share that stayed safe):\n\n")
	intervals := slices.ContainsFunc(c.States, func(r calibrationRow) bool { return r.Low != nil })
	rows = [][]string{{"state", "predicates", "P_safe", "groups", "stayed safe", "observed"}}
	if intervals {
		rows[0] = slices.Insert(rows[0], 3, "interval")
	}
	for _, r := range c.States {
		row := []string{r.State, r.Holding, fmt.Sprintf("%.3f", r.PSafe), strconv.Itoa(r.Groups), strconv.Itoa(r.StayedSafe), fmt.Sprintf("%.3f", r.Observed)}
		if intervals {
			interval := "-"
			if r.Low != nil {
				interval = fmt.Sprintf("%.3f-%.3f", *r.Low, *r.High)
			}
			row = slices.Insert(row, 3, interval)
		}
		rows = append(rows, row)
	}
	if err := writeRows(w, rows, markdown); err != nil {
		return err
	}
	if c.CoverageStates > 0 {
		fmt.Fprintf(w, "\nThe observed share falls in the state's credible interval for %d of the %d states with at least %d groups\n",
			c.Covered, c.CoverageStates, coverageGroups)
	}
	fmt.Fprintf(w, "\nBrier score %.4f over %d predictions (%.4f predicting the overall share for every one)\n", c.Brier, c.Predictions, c.BrierBaseRate)
	if s := ev.Suggestion; s != nil {
		p := s.Point
		fmt.Fprintf(w, "\nSuggested θ for false alarms at most %.1f%%: %s (%s): %s unsafe runs warned in time, %s false alarms",
			100*s.Target, formatTheta(p), describeInterval(p), share(p.Warned, ev.Unsafe), share(p.FalseAlarms, ev.Safe))
		if p.Lead != nil {
			fmt.Fprintf(w, ", median lead %g events, %.1f s", p.Lead.Events.P50, p.Lead.Seconds.P50)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// writeRows writes a header and rows as a markdown table (numbers right-aligned)
// or as aligned text.
func writeRows(w io.Writer, rows [][]string, markdown bool) error {
	if markdown {
		for i, cells := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
			if i == 0 {
				fmt.Fprintf(w, "|%s\n", strings.Repeat("---:|", len(cells)))
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, cells := range rows {
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

func leadEvents(l *leadStats) string {
	if l == nil {
		return "–"
	}
	e := l.Events
	return fmt.Sprintf("%g/%g/%g/%g/%g", e.Min, e.P10, e.P50, e.P90, e.Max)
}

func leadSeconds(l *leadStats) string {
	if l == nil {
		return "–"
	}
	s := l.Seconds
	return fmt.Sprintf("%.1f/%.1f/%.1f", s.P10, s.P50, s.P90)
}

func share(n, of int) string {
	if of == 0 {
		return "0/0"
	}
	return fmt.Sprintf("%d/%d (%.1f%%)", n, of, 100*float64(n)/float64(of))
}

func mean(v *float64, digits int) string {
	if v == nil {
		return "–"
	}
	return strconv.FormatFloat(*v, 'f', digits, 64)
}

func alerts(n, runs int) string { return fmt.Sprintf("%d (%s)", n, plural(runs, "run")) }
