// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/processor/probguard"
)

// agentguard abstract chooses probguard's abstraction from a user's own
// episodes: it proposes atoms over the state the tool calls' results carry
// (abstractatoms.go), and adds, one at a time, the atom that most lowers
// the Brier score of P_safe on held-out folds of the training episodes
// (folds by episode), until none helps or there are --max-predicates. It
// writes the chosen abstraction as a probguard block, with a model learned
// on every training episode, and reports the choice: the cross-validated
// Brier score against the base rate's, and, held in, the chain's Pareto
// front beside the best single-atom rules'.

type abstractOptions struct {
	processorFlags
	hazard         string
	maxPredicates  int
	folds          int
	out, modelOut  string
	minImprovement float64
	files          []string
}

func runAbstract(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("abstract", "--config COLLECTOR.yaml [--processor probguard/NAME] --hazard FIELD[=VALUE|>=NUMBER] [--max-predicates 4] [--folds 5] [--out FILE] [--model-out FILE] TRAIN.json...", stderr)
	var o abstractOptions
	o.register(fs)
	fs.StringVar(&o.hazard, "hazard", "", "the unsafe state: a tool-result field that is true there (unsafe), FIELD=VALUE, or FIELD>=NUMBER")
	fs.IntVar(&o.maxPredicates, "max-predicates", 4, "the most predicates chosen besides the hazard")
	fs.IntVar(&o.folds, "folds", 5, "cross-validation folds, by episode")
	fs.StringVar(&o.out, "out", "", "write the probguard block to this `file` (default: stdout)")
	fs.StringVar(&o.modelOut, "model-out", "abstraction-model.json", "write the model learned on every training episode to this `file`")
	fs.Float64Var(&o.minImprovement, "min-improvement", 0.001, "stop when the best atom raises the cross-validated area under the front by less than this")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o.files = fs.Args()
	fail := func(err error) int {
		fmt.Fprintln(stderr, "agentguard abstract:", err)
		return 2
	}
	if err := o.validate(); err != nil {
		return fail(err)
	}
	start := time.Now()
	a, err := abstract(o, stderr)
	if err != nil {
		return fail(err)
	}
	w := stdout
	if o.out != "" {
		f, err := os.Create(o.out)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		w = f
	}
	if err := a.writeBlock(w, o.modelOut); err != nil {
		return fail(err)
	}
	if err := a.model.WriteFile(o.modelOut); err != nil {
		return fail(err)
	}
	a.writeReport(stderr, time.Since(start))
	return 0
}

func (o abstractOptions) validate() error {
	switch {
	case o.hazard == "":
		return errors.New("--hazard is required: the tool-result field that marks the unsafe state (e.g. --hazard unsafe)")
	case len(o.files) == 0:
		return errors.New("no training files: give the episodes' OTLP/JSON files")
	case o.maxPredicates < 1 || o.maxPredicates > 10:
		return fmt.Errorf("--max-predicates %d: want 1 to 10", o.maxPredicates)
	case o.folds < 2:
		return fmt.Errorf("--folds %d: want at least 2", o.folds)
	}
	return o.check()
}

// abstraction is what abstract chose and measured.
type abstraction struct {
	cfg       *probguard.Config
	folds     int
	smoothing dtmc.Smoothing // chosen with the predicates
	hazard    atom
	chosen    []atom
	steps     []selectionStep
	episodes  int
	unsafe    int
	events    int
	atoms     int
	model     *dtmc.Model
	front     []sweepPoint // held in, the chosen chain's
	rules     []rulePoint  // held in, the single-atom rules on their front
	theta     float64      // suggested: the front's point of at most 10 % false alarms warning the most
}

// selectionStep is the cross-validated scores after each atom was added.
type selectionStep struct {
	added string
	cvScores
}

// episodeSet is the training episodes: per episode, its events, and the
// index of its first event in the atoms' holds.
type episodeSet struct {
	events [][]sequence.Event
	first  []int
}

func abstract(o abstractOptions, stderr io.Writer) (*abstraction, error) {
	id, cfg, err := readProbguardConfig(o.config, o.name)
	if err != nil {
		return nil, err
	}
	in, err := readGroups("abstract", id, cfg, o.files, stderr)
	if err != nil {
		return nil, err
	}
	if err := in.requireEvents(cfg.Config, "to choose an abstraction from"); err != nil {
		return nil, err
	}
	reader, err := predicate.Compile(predicate.Config{}, predicate.Settings{Telemetry: offlineSettings(id, stderr).TelemetrySettings})
	if err != nil {
		return nil, err
	}
	fv, eps := newResultFields(), episodeSet{}
	for _, g := range in.groups {
		eps.first = append(eps.first, fv.events)
		eps.events = append(eps.events, g.Events)
		for _, ev := range g.Events {
			fv.add(reader.Call(ev.Span, true))
		}
	}
	hazard, err := fv.parseHazard(o.hazard)
	if err != nil {
		return nil, err
	}
	cands := slices.DeleteFunc(fv.atoms(), func(a atom) bool { return a.field == hazard.field })
	a := &abstraction{cfg: cfg, folds: o.folds, hazard: hazard, episodes: len(eps.events), events: fv.events, atoms: len(cands)}
	a.unsafe = eps.unsafeCount(hazard)
	if err := a.chooseWithSmoothing(eps, cands, o); err != nil {
		return nil, err
	}
	return a, a.measure(eps, cands)
}

// smoothings are the estimators tried: Laplace's α decides how much a row
// seen a few times leans towards every valid successor (the hazard among
// them), which a small data set cannot afford.
var smoothings = []dtmc.Smoothing{
	{Mode: dtmc.Laplace, Alpha: 1}, {Mode: dtmc.Laplace, Alpha: 0.1}, {Mode: dtmc.Laplace, Alpha: 0.01}, {Mode: dtmc.Frequency},
}

// chooseWithSmoothing chooses predicates under each smoothing and keeps the
// choice whose cross-validated score is lowest.
func (a *abstraction) chooseWithSmoothing(eps episodeSet, cands []atom, o abstractOptions) error {
	type choice struct {
		smoothing dtmc.Smoothing
		chosen    []atom
		steps     []selectionStep
	}
	var best *choice
	for _, sm := range smoothings {
		a.smoothing, a.chosen, a.steps = sm, nil, nil
		if err := a.choose(eps, cands, o); err != nil {
			return err
		}
		if best == nil || a.steps[len(a.steps)-1].auc > best.steps[len(best.steps)-1].auc {
			best = &choice{sm, a.chosen, a.steps}
		}
	}
	a.smoothing, a.chosen, a.steps = best.smoothing, best.chosen, best.steps
	return nil
}

func (eps episodeSet) unsafeCount(hazard atom) int {
	n := 0
	for e := range eps.events {
		if eps.unsafe(hazard, e) {
			n++
		}
	}
	return n
}

// runs are the episodes' events with the bits of the predicates [hazard,
// chosen...] (bit i, predicate i), for episodes where keep is true.
func (eps episodeSet) runs(preds []atom, keep func(e int) bool) [][]sequence.Event {
	var out [][]sequence.Event
	for e, evs := range eps.events {
		if !keep(e) {
			continue
		}
		run := make([]sequence.Event, len(evs))
		for j, ev := range evs {
			run[j] = sequence.Event{Start: ev.Start}
			for i, p := range preds {
				if p.holds[eps.first[e]+j] {
					run[j].Bits |= 1 << uint(i)
				}
			}
		}
		out = append(out, run)
	}
	return out
}

// guardOf learns the chain of preds over runs and solves always_safe.
func (a *abstraction) guardOf(preds []atom, runs [][]sequence.Event) (*guard.Guard, error) {
	names := make([]string, len(preds))
	for i, p := range preds {
		names[i] = p.name
	}
	counts := dtmc.NewCounts()
	for _, run := range runs {
		states := make([]dtmc.State, len(run))
		for j, ev := range run {
			states[j] = dtmc.State(ev.Bits)
		}
		if err := counts.AddTrace(states); err != nil {
			return nil, err
		}
	}
	m, err := dtmc.Learn(dtmc.Spec{Predicates: names, Smoothing: a.smoothing, Unsafe: preds[0].name}, counts)
	if err != nil {
		return nil, err
	}
	return newGuard(m, guard.Options{Property: dtmc.Property{Kind: dtmc.AlwaysSafe, Unsafe: preds[0].name},
		Threshold: 0.5, Report: guard.ReportEvery, Unknown: guard.UnknownAlert})
}

// cvScores are an abstraction's scores on the held-out folds.
type cvScores struct {
	// auc: of every unsafe and safe held-out episode, the chance that the
	// unsafe one's lowest P_safe before the hazard is below the safe one's
	// lowest (ties half). A warning comes where P_safe drops below θ, so
	// this is the area under the front of warned against false alarms that
	// θ sweeps: what the choice maximises.
	auc float64
	// brier: P_safe at every event before the hazard against whether the
	// episode stayed safe (the training share where the model never saw the
	// state); base: predicting the training share at every event. The same
	// predictions for every abstraction, so they compare.
	brier, base float64
	predictions int
}

// crossValidate learns preds' chain on all folds but one and scores the
// held-out one, for each fold.
func (a *abstraction) crossValidate(eps episodeSet, preds []atom, folds int) (cvScores, error) {
	var sc cvScores
	var sum, sumBase float64
	var lowest []episodeScore
	all := eps.runs(preds, func(int) bool { return true })
	for f := range folds {
		train := func(e int) bool { return e%folds != f }
		g, err := a.guardOf(preds, eps.runs(preds, train))
		if err != nil {
			return sc, err
		}
		share := eps.safeShare(a.hazard, train)
		for e, run := range all {
			if train(e) {
				continue
			}
			unsafe := eps.unsafe(a.hazard, e)
			outcome := 1.0
			if unsafe {
				outcome = 0
			}
			low := 1.0
			for _, ev := range run {
				if ev.Bits&1 != 0 {
					break // the hazard: nothing left to predict
				}
				p := share
				if i, ok := g.Model().Index(dtmc.State(ev.Bits)); ok && g.Seen(i) {
					p = g.Safety().PSafe(i)
				}
				low = min(low, p)
				sum += (p - outcome) * (p - outcome)
				sumBase += (share - outcome) * (share - outcome)
				sc.predictions++
			}
			lowest = append(lowest, episodeScore{low, unsafe})
		}
	}
	if sc.predictions == 0 {
		return sc, errors.New("no event before the hazard in any episode: nothing to predict")
	}
	sc.brier, sc.base, sc.auc = sum/float64(sc.predictions), sumBase/float64(sc.predictions), auc(lowest)
	return sc, nil
}

// episodeScore is an episode's lowest P_safe before the hazard, and
// whether it went unsafe.
type episodeScore struct {
	low    float64
	unsafe bool
}

// auc is the chance that an unsafe episode's score is below a safe one's,
// ties counting half; 0.5 without both kinds.
func auc(scores []episodeScore) float64 {
	slices.SortFunc(scores, func(x, y episodeScore) int { return cmp.Compare(x.low, y.low) })
	var unsafeSeen, pairs, wins float64
	for i := 0; i < len(scores); {
		j := i
		var u, s float64
		for ; j < len(scores) && scores[j].low == scores[i].low; j++ {
			if scores[j].unsafe {
				u++
			} else {
				s++
			}
		}
		wins += s * (unsafeSeen + u/2) // safe ones above the unsafe seen before, half of the tied ones
		unsafeSeen += u
		pairs += s
		i = j
	}
	if unsafeSeen == 0 || pairs == 0 {
		return 0.5
	}
	return wins / (unsafeSeen * pairs)
}

// unsafe reports whether episode e reaches the hazard.
func (eps episodeSet) unsafe(hazard atom, e int) bool {
	return slices.Contains(hazard.holds[eps.first[e]:eps.first[e]+len(eps.events[e])], true)
}

// safeShare is the share of the events before the hazard, in the episodes
// keep selects, whose episode stayed safe.
func (eps episodeSet) safeShare(hazard atom, keep func(int) bool) float64 {
	var safe, all int
	for e, evs := range eps.events {
		if !keep(e) {
			continue
		}
		unsafe := eps.unsafe(hazard, e)
		for j := range evs {
			if hazard.holds[eps.first[e]+j] {
				break
			}
			all++
			if !unsafe {
				safe++
			}
		}
	}
	if all == 0 {
		return 0.5
	}
	return float64(safe) / float64(all)
}

// choose adds atoms greedily while some raise the cross-validated area
// under the front: the best single atom, or, where none helps alone, the
// best pair (two facts can tell apart together what neither does: the
// stove on, and nobody in the kitchen).
func (a *abstraction) choose(eps episodeSet, cands []atom, o abstractOptions) error {
	preds := []atom{a.hazard}
	best, err := a.crossValidate(eps, preds, o.folds)
	if err != nil {
		return err
	}
	a.steps = append(a.steps, selectionStep{"(the hazard alone)", best})
	for size := 1; len(preds)-1+size <= o.maxPredicates && size <= 2; {
		add, sc, err := a.bestAddition(eps, preds, cands, size, o.folds)
		if err != nil {
			return err
		}
		if add == nil || sc.auc-best.auc < o.minImprovement {
			size++ // nothing helps alone: try pairs
			continue
		}
		preds, best, size = append(preds, add...), sc, 1
		a.steps = append(a.steps, selectionStep{strings.Join(names(add), " + "), best})
	}
	a.chosen = preds[1:]
	return nil
}

// bestAddition is the set of size atoms not yet chosen whose addition
// scores highest, with its scores; nil when there is none.
func (a *abstraction) bestAddition(eps episodeSet, preds, cands []atom, size, folds int) ([]atom, cvScores, error) {
	var free []atom
	for _, c := range cands {
		if !slices.ContainsFunc(preds, func(p atom) bool { return p.name == c.name }) {
			free = append(free, c)
		}
	}
	var pick []atom
	var pickScores cvScores
	try := func(add ...atom) error {
		sc, err := a.crossValidate(eps, append(slices.Clone(preds), add...), folds)
		if err == nil && (pick == nil || sc.auc > pickScores.auc) {
			pick, pickScores = slices.Clone(add), sc
		}
		return err
	}
	for i := range free {
		if size == 1 {
			if err := try(free[i]); err != nil {
				return nil, cvScores{}, err
			}
			continue
		}
		for j := i + 1; j < len(free); j++ {
			if err := try(free[i], free[j]); err != nil {
				return nil, cvScores{}, err
			}
		}
	}
	return pick, pickScores, nil
}

// rulePoint is a rule "warn where this atom holds": its warned unsafe
// episodes (before the hazard) and warned safe ones.
type rulePoint struct {
	atom        string
	warned      int
	falseAlarms int
}

// measure learns the model on every episode and, held in, the chain's
// front and the single-atom rules'.
func (a *abstraction) measure(eps episodeSet, cands []atom) error {
	preds := append([]atom{a.hazard}, a.chosen...)
	all := eps.runs(preds, func(int) bool { return true })
	g, err := a.guardOf(preds, all)
	if err != nil {
		return err
	}
	a.model = g.Model()
	a.front = slices.DeleteFunc(sweep(scoreRuns(g, all)), func(p sweepPoint) bool { return !p.Pareto })
	a.theta = 0
	for _, p := range a.front {
		if p.FalseAlarms*10 <= a.episodes-a.unsafe && p.Theta > a.theta {
			a.theta = p.Theta
		}
	}
	if a.theta == 0 { // no point warns anything within 10 % false alarms: the front's first that warns
		a.theta = 0.5
		if i := slices.IndexFunc(a.front, func(p sweepPoint) bool { return p.Warned > 0 && p.Theta > 0 }); i >= 0 {
			a.theta = a.front[i].Theta
		}
	}
	for _, c := range cands {
		a.rules = append(a.rules, eps.rule(a.hazard, c))
	}
	a.rules = paretoRules(a.rules)
	return nil
}

// rule scores "warn where c holds" held in.
func (eps episodeSet) rule(hazard, c atom) rulePoint {
	p := rulePoint{atom: c.name}
	for e, evs := range eps.events {
		unsafe, warned := false, false
		for j := range evs {
			k := eps.first[e] + j
			if hazard.holds[k] {
				unsafe = true
				break
			}
			warned = warned || c.holds[k]
		}
		switch {
		case unsafe && warned:
			p.warned++
		case !unsafe && warned:
			p.falseAlarms++
		}
	}
	return p
}

// paretoRules keeps the rules no other warns more unsafe episodes with as
// few false alarms, best first.
func paretoRules(rs []rulePoint) []rulePoint {
	var out []rulePoint
	for _, r := range rs {
		dominated := slices.ContainsFunc(rs, func(o rulePoint) bool {
			return (o.warned >= r.warned && o.falseAlarms < r.falseAlarms) || (o.warned > r.warned && o.falseAlarms <= r.falseAlarms)
		})
		if !dominated && !slices.ContainsFunc(out, func(o rulePoint) bool { return o.warned == r.warned && o.falseAlarms == r.falseAlarms }) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(x, y rulePoint) int { return x.falseAlarms - y.falseAlarms })
	return out
}

// writeBlock writes the chosen abstraction as a probguard processor block.
func (a *abstraction) writeBlock(w io.Writer, model string) error {
	preds := []map[string]any{}
	for _, p := range append([]atom{a.hazard}, a.chosen...) {
		preds = append(preds, map[string]any{"name": p.name, "tool": "*", "result": map[string]any{p.field: p.match}})
	}
	block := map[string]any{"processors": map[string]any{"probguard/abstracted": map[string]any{
		"group_by":   a.cfg.GroupBy,
		"events":     a.eventsCondition(),
		"predicates": preds,
		"unsafe":     a.hazard.name,
		"smoothing":  smoothingBlock(a.smoothing),
		"model":      model,
		"threshold":  a.theta,
	}}}
	fmt.Fprintf(w, "# Chosen by agentguard abstract from %d episodes (%d unsafe): the hazard and %d predicates of %d candidates,\n"+
		"# by %d-fold cross-validated Brier score; the threshold is the held-in front's point warning the most unsafe\n"+
		"# episodes with at most 10%% false alarms. The report is on stderr.\n", a.episodes, a.unsafe, len(a.chosen), a.atoms, a.folds)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(block); err != nil {
		return err
	}
	return enc.Close()
}

func smoothingBlock(s dtmc.Smoothing) map[string]any {
	if s.Mode == dtmc.Frequency {
		return map[string]any{"mode": string(s.Mode)}
	}
	return map[string]any{"mode": string(s.Mode), "alpha": s.Alpha}
}

// eventsCondition is the configuration's events condition, or its default.
func (a *abstraction) eventsCondition() string {
	if a.cfg.Events != nil && a.cfg.Events.Condition != "" {
		return a.cfg.Events.Condition
	}
	return predicate.DefaultEvents
}

func (a *abstraction) writeReport(w io.Writer, took time.Duration) {
	fmt.Fprintf(w, "agentguard abstract: %d episodes (%d unsafe), %d events, %d candidate predicates, %v\n",
		a.episodes, a.unsafe, a.events, a.atoms, took.Round(time.Millisecond))
	fmt.Fprintf(w, "selection, %d-fold cross-validated, smoothing %s: the area under the front of warned against false alarms,\n"+
		"and the Brier score of P_safe at every event before the hazard (predicting the base rate: %.4f):\n",
		a.folds, smoothingText(a.smoothing), a.steps[0].base)
	for _, s := range a.steps {
		fmt.Fprintf(w, "  + %-46s area %.4f  Brier %.4f over %d predictions\n", s.added, s.auc, s.brier, s.predictions)
	}
	fmt.Fprintf(w, "held in, the chain of the chosen predicates (Pareto front: unsafe episodes warned before the hazard, false alarms on safe ones):\n")
	safe := a.episodes - a.unsafe
	for _, p := range a.front {
		fmt.Fprintf(w, "  θ %-8.4g %s warned, %s false alarms\n", p.Theta, share(p.Warned, a.unsafe), share(p.FalseAlarms, safe))
	}
	fmt.Fprintf(w, "held in, the single-predicate rules on their front (warn where it holds):\n")
	for _, r := range a.rules {
		fmt.Fprintf(w, "  %-48s %s warned, %s false alarms\n", r.atom, share(r.warned, a.unsafe), share(r.falseAlarms, safe))
	}
	fmt.Fprintf(w, "chosen: %s; suggested θ %.4g\n", strings.Join(names(a.chosen), ", "), a.theta)
}

func smoothingText(s dtmc.Smoothing) string {
	if s.Mode == dtmc.Frequency {
		return "frequency"
	}
	return fmt.Sprintf("laplace α %g", s.Alpha)
}

func names(as []atom) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.name
	}
	return out
}
