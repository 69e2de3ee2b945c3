// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/events"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/processor/probguard"
)

// runLearn learns a probguard model from recorded OTLP/JSON traces with
// exactly the processor's abstraction, adds the counts of the models given
// with --merge (shards, or what collectors learned online), writes it
// atomically and prints its PAC report. Exit 0 on success, 2 on errors.
func runLearn(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("learn", "--config COLLECTOR.yaml [--processor probguard/NAME] -o MODEL.json [--merge M.json]... FILES...", stderr)
	var o learnOptions
	o.register(fs)
	fs.StringVar(&o.output, "o", "", "write the learned model to `MODEL.json` (atomically: a temporary file beside it, then renamed)")
	fs.Var(&o.merge, "merge", "add the counts of the model file `M.json`, learned under the same predicates and valid_transitions (repeatable; FILES may then be empty)")
	fs.Float64Var(&o.eps, "epsilon", 0.1, "the PAC report's accuracy ε of every probability")
	fs.Float64Var(&o.delta, "delta", 0.05, "the PAC report's confidence 1 − δ")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o.files = fs.Args()
	if err := learn(o, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "agentguard learn:", err)
		return 2
	}
	return 0
}

type learnOptions struct {
	processorFlags
	output     string
	merge      fileList
	eps, delta float64
	files      []string
}

func learn(o learnOptions, stdout, stderr io.Writer) error {
	if err := o.check(); err != nil {
		return err
	}
	switch {
	case o.output == "":
		return errors.New("-o MODEL.json is required")
	case len(o.files) == 0 && len(o.merge) == 0:
		return errors.New("no trace files and no --merge models given")
	}
	id, cfg, err := readProbguardConfig(o.config, o.name)
	if err != nil {
		return err
	}
	in, err := readGroups("learn", id, cfg, o.files, stderr)
	if err != nil {
		return err
	}
	// Trace files that yield no event would add nothing, silently: with
	// only them, the model would be the smoothing's prior alone.
	if len(o.files) > 0 {
		if err := in.requireEvents(cfg.Config, "to learn from"); err != nil {
			return err
		}
	}
	in.warnNeverHeld(stderr, "learn", cfg.Predicates)
	l, err := guard.NewLearner(cfg.Spec())
	if err != nil {
		return err
	}
	skipped := countRuns(l, in.groups)
	merged, err := mergeModels(cfg, l.Counts(), o.merge, stderr)
	if err != nil {
		return err
	}
	m, err := dtmc.Learn(cfg.Spec(), l.Counts())
	if err != nil {
		return err
	}
	if err := m.WriteFile(o.output); err != nil {
		return err
	}
	warnSkipped(stderr, skipped)
	printLearned(stdout, in, merged, m, o.output)
	return printPAC(stdout, stderr, m, o.eps, o.delta)
}

// countRuns counts every group's run as the processor's online learning
// does: its events in order, then its move to end. It returns the moves
// valid_transitions forbid, which are not counted, by reason.
func countRuns(l *guard.Learner, groups []events.Group) map[string]int {
	skipped := map[string]int{}
	for _, g := range groups {
		var path guard.Path
		for _, ev := range g.Events {
			if why := l.Step(&path, ev.Bits); why != "" {
				skipped[why]++
			}
		}
		l.End(&path)
	}
	return skipped
}

// mergedModel is a --merge file and the runs it added.
type mergedModel struct {
	path string
	runs uint64
}

// mergeModels adds the counts of model files into counts; each must have
// been learned over the configuration's abstraction, or its counts would
// mean other states.
func mergeModels(cfg *probguard.Config, counts *dtmc.Counts, paths []string, stderr io.Writer) ([]mergedModel, error) {
	var out []mergedModel
	for _, path := range paths {
		m, err := readModel(path, "", stderr)
		if err != nil {
			return nil, fmt.Errorf("--merge: %w", err)
		}
		if err := cfg.Matches(m, path); err != nil {
			return nil, fmt.Errorf("--merge: %w", err)
		}
		counts.Merge(m.Counts())
		out = append(out, mergedModel{path, m.Counts().Traces()})
	}
	return out, nil
}

func warnSkipped(stderr io.Writer, skipped map[string]int) {
	for _, why := range slices.Sorted(maps.Keys(skipped)) {
		fmt.Fprintf(stderr, "agentguard learn: warning: valid_transitions: %s not counted: %s\n", plural(skipped[why], "move"), why)
	}
}

// printLearned summarises what went into the model and what it saw.
func printLearned(w io.Writer, in traceInput, merged []mergedModel, m *dtmc.Model, output string) {
	fmt.Fprintf(w, "read %s: %s in %s, %s\n", plural(in.files, "file"), plural(in.traces, "trace"), plural(len(in.groups), "group"), plural(in.events, "event"))
	if len(merged) > 0 {
		parts := make([]string, len(merged))
		for i, mm := range merged {
			parts[i] = fmt.Sprintf("%s (%s)", mm.path, plural(int(mm.runs), "run"))
		}
		fmt.Fprintf(w, "merged %s: %s\n", plural(len(merged), "model"), strings.Join(parts, ", "))
	}
	var seen, unseen []string
	for i, s := range m.States() {
		switch {
		case s == dtmc.End:
		case m.Visits(i) > 0:
			seen = append(seen, m.StateName(i))
		default:
			unseen = append(unseen, m.StateName(i))
		}
	}
	fmt.Fprintf(w, "states seen: %d of %d (%s); never seen: %s\n", len(seen), len(seen)+len(unseen), orNone(seen), orNone(unseen))
	fmt.Fprintf(w, "wrote %s: %s\n\n", output, plural(int(m.Counts().Traces()), "run"))
}

// printPAC prints the model's PAC report; a configuration without an unsafe
// formula (a response property) has none, which is not an error.
func printPAC(stdout, stderr io.Writer, m *dtmc.Model, eps, delta float64) error {
	if m.Unsafe() == nil {
		fmt.Fprintln(stderr, "agentguard learn: no PAC report: the configuration has no unsafe formula")
		return nil
	}
	sv, err := dtmc.NewSolver(dtmc.Options{})
	if err != nil {
		return err
	}
	r, err := m.PAC(eps, delta, sv)
	if err != nil {
		return err
	}
	return r.WriteText(stdout)
}

// processorFlags are how the probguard commands find the processor's block.
type processorFlags struct {
	config, name string
}

func (p *processorFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.config, "config", "", "the collector configuration `file` holding the probguard processor")
	fs.StringVar(&p.name, "processor", "", "which probguard processor, e.g. probguard/stove (default: the only one)")
}

func (p processorFlags) check() error {
	if p.config == "" {
		return errors.New("--config is required")
	}
	return nil
}

// fileList collects a repeated flag's values in order.
type fileList []string

func (f *fileList) String() string { return strings.Join(*f, ",") }

func (f *fileList) Set(v string) error {
	*f = append(*f, v)
	return nil
}

// newFlagSet is a command's flag set whose -h output starts with its
// synopsis.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: agentguard %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// readProbguardConfig reads a probguard processor's block as the collector
// does but validates its abstraction only (predicates, rules, property,
// threshold), not its model: learn writes the model, which may not exist
// yet, and risk and evaluate may be given another one with --model, which
// they check against the block themselves.
func readProbguardConfig(path, name string) (component.ID, *probguard.Config, error) {
	id, raw, err := unmarshalProcessor(path, name, probguard.NewFactory())
	if err != nil {
		return id, nil, err
	}
	cfg := raw.(*probguard.Config)
	// ValidateAbstraction leaves the predicates' own shapes to the
	// collector's recursive validation of the embedded predicate.Config.
	if err := errors.Join(confmap.Validate(cfg.Config), cfg.ValidateAbstraction()); err != nil {
		return id, nil, fmt.Errorf("%s: processors::%s: %w", path, id, err)
	}
	return id, cfg, nil
}

// traceInput is trace files turned into the groups the processor would
// score, with what was read.
type traceInput struct {
	files, traces, spans, events int
	groups                       []events.Group
	held                         []int // per declared predicate: events where it held
}

// readGroups reads trace files and sequences them exactly as the processor
// does (its predicates, latches and groups). OTTL errors are reported as a
// collector reports them: the first of each predicate, and all counted; a
// predicate that errs counts as false there, live as well.
func readGroups(cmd string, id component.ID, cfg *probguard.Config, files []string, stderr io.Writer) (traceInput, error) {
	ts := offlineSettings(id, stderr).TelemetrySettings
	src, err := events.NewSource(cfg.Config, cfg.GroupBy, ts)
	if err != nil {
		return traceInput{}, fmt.Errorf("processors::%s: %w", id, err)
	}
	tds, err := readTraceFiles(files)
	if err != nil {
		return traceInput{}, err
	}
	in := traceInput{files: len(files), held: make([]int, len(cfg.Predicates))}
	in.traces, in.spans = countTraces(tds)
	var ottlErrors events.Errors
	in.groups, ottlErrors = src.Groups(tds)
	for _, g := range in.groups {
		in.events += len(g.Events)
		for _, ev := range g.Events {
			for i := range in.held {
				if ev.Bits&(1<<uint(i)) != 0 {
					in.held[i]++
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(ottlErrors.First)) {
		fmt.Fprintf(stderr, "agentguard %s: warning: predicate evaluation failed (%s): %v\n", cmd, name, ottlErrors.First[name])
	}
	if ottlErrors.Count > 0 {
		fmt.Fprintf(stderr, "agentguard %s: warning: %d OTTL evaluation errors: those predicates count as false at those spans\n", cmd, ottlErrors.Count)
	}
	return in, nil
}

func countTraces(tds []ptrace.Traces) (traces, spans int) {
	ids := map[pcommon.TraceID]bool{}
	for _, td := range tds {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, span := range ss.Spans().All() {
					ids[span.TraceID()] = true
					spans++
				}
			}
		}
	}
	return len(ids), spans
}

// requireEvents refuses input without a single event, saying why: no
// spans at all, or an events condition that selected none of them.
func (in traceInput) requireEvents(cfg predicate.Config, purpose string) error {
	if in.events > 0 {
		return nil
	}
	if in.spans == 0 {
		return fmt.Errorf("no events %s: no spans in %s", purpose, plural(in.files, "file"))
	}
	cond := "the default, tool-call and handoff spans"
	if cfg.Events != nil {
		cond = definition(*cfg.Events)
	}
	return fmt.Errorf("no events %s: the events condition (%s) selected none of the %s of %s read from %s",
		purpose, cond, plural(in.spans, "span"), plural(in.traces, "trace"), plural(in.files, "file"))
}

// warnNeverHeld names the declared predicates that held at no event read.
func (in traceInput) warnNeverHeld(stderr io.Writer, cmd string, preds predicate.List) {
	if in.events == 0 {
		return
	}
	for i, p := range preds {
		if in.held[i] == 0 {
			fmt.Fprintf(stderr, "agentguard %s: warning: predicate %s (%s) never held on the %s read\n", cmd, p.Name, definition(p.Predicate), plural(in.events, "event"))
		}
	}
}

// plural is "1 trace", "2 traces".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
