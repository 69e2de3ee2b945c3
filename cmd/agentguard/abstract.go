// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.yaml.in/yaml/v3"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/processor/probguard"
)

// agentguard abstract chooses probguard's abstraction from a user's own
// episodes: it proposes atoms over what the spans carry (abstractatoms.go:
// the state the tools' results report, and pairs of its facts;
// abstractcalls.go: the tools called, and latches from one tool to
// another), and chooses among them by cross-validation on the training
// episodes (folds by episode, abstractscore.go): first for the front of
// warned against false alarms where a monitor runs, warning nearly every
// unsafe episode (atoms added one at a time, and exchanged, while one
// gains more than chance would), a number chosen at two thresholds filled
// in with the thresholds between them (fillThresholds), then, with the
// predicates left, for the Brier score of P_safe. It writes the chosen abstraction as a probguard
// block, with a model learned on every training episode, and reports the
// choice: the cross-validated scores at each step, the Brier score against
// the base rate's, and, held in, the chain's Pareto front beside the best
// single-atom rules'.

type abstractOptions struct {
	processorFlags
	hazard         string
	maxPredicates  int
	folds          int
	out, modelOut  string
	minImprovement float64
	minWarned      float64
	fillScale      bool
	files          []string
}

func runAbstract(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("abstract", "--config COLLECTOR.yaml [--processor probguard/NAME] --hazard FIELD[=VALUE|>=NUMBER] [--max-predicates 4] [--folds 5] [--min-warned 0.9] [--fill-scale=true] [--out FILE] [--model-out FILE] TRAIN.json...", stderr)
	var o abstractOptions
	o.register(fs)
	fs.StringVar(&o.hazard, "hazard", "", "the unsafe state: a tool-result field that is true there (unsafe), FIELD=VALUE, or FIELD>=NUMBER")
	fs.IntVar(&o.maxPredicates, "max-predicates", 4, "the most predicates chosen besides the hazard (and the thresholds filled in between two chosen on one number)")
	fs.IntVar(&o.folds, "folds", 5, "cross-validation folds, by episode")
	fs.StringVar(&o.out, "out", "", "write the probguard block to this `file` (default: stdout)")
	fs.StringVar(&o.modelOut, "model-out", "abstraction-model.json", "write the model learned on every training episode to this `file`")
	fs.Float64Var(&o.minImprovement, "min-improvement", 0.001, "stop when the best atom raises the cross-validated area (--min-warned) by less than this")
	fs.BoolVar(&o.fillScale, "fill-scale", true, "fill a number chosen for the front at two thresholds with the thresholds between them")
	fs.Float64Var(&o.minWarned, "min-warned", 0.9, "choose for the area under the front from warning this share of the unsafe episodes to warning them all (0: the whole front)")
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
	case o.minWarned < 0 || o.minWarned >= 1:
		return fmt.Errorf("--min-warned %g: want at least 0 and below 1", o.minWarned)
	}
	return o.check()
}

// abstraction is what abstract chose and measured.
type abstraction struct {
	cfg       *probguard.Config
	folds     int
	smoothing dtmc.Smoothing // chosen after the predicates
	final     cvScores       // the chosen chain's, under smoothing
	hazard    atom
	chosen    []atom
	steps     []selectionStep
	episodes  int
	unsafe    int
	events    int
	atoms     int
	model     *dtmc.Model
	plan      foldPlan
	minWarned float64      // the top area's start (cvScores.area)
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
	tr, err := readTraining(o, stderr)
	if err != nil {
		return nil, err
	}
	hazard, err := tr.fields.parseHazard(o.hazard)
	if err != nil {
		return nil, err
	}
	cands, err := candidates(tr.fields, hazard, tr.eps, tr.telemetry)
	if err != nil {
		return nil, err
	}
	a := &abstraction{cfg: tr.cfg, folds: o.folds, hazard: hazard, episodes: len(tr.eps.events), events: tr.fields.events,
		atoms: len(cands), minWarned: o.minWarned}
	a.unsafe = tr.eps.unsafeCount(hazard)
	a.plan = tr.eps.planFolds(hazard, o.folds)
	if err := a.chooseWithSmoothing(tr.eps, cands, o); err != nil {
		return nil, err
	}
	return a, a.measure(tr.eps, cands)
}

// training is the training episodes as the processor groups them, and the
// fields their tools' results carry.
type training struct {
	cfg       *probguard.Config
	eps       episodeSet
	fields    *resultFields
	telemetry component.TelemetrySettings
}

func readTraining(o abstractOptions, stderr io.Writer) (training, error) {
	id, cfg, err := readProbguardConfig(o.config, o.name)
	if err != nil {
		return training{}, err
	}
	in, err := readGroups("abstract", id, cfg, o.files, stderr)
	if err != nil {
		return training{}, err
	}
	if err := in.requireEvents(cfg.Config, "to choose an abstraction from"); err != nil {
		return training{}, err
	}
	tr := training{cfg: cfg, fields: newResultFields(), telemetry: offlineSettings(id, stderr).TelemetrySettings}
	reader, err := predicate.Compile(predicate.Config{}, predicate.Settings{Telemetry: tr.telemetry})
	if err != nil {
		return training{}, err
	}
	for _, g := range in.groups {
		tr.eps.first = append(tr.eps.first, tr.fields.events)
		tr.eps.events = append(tr.eps.events, g.Events)
		for _, ev := range g.Events {
			tr.fields.add(reader.Call(ev.Span, true))
		}
	}
	return tr, nil
}

// candidates are the atoms abstract chooses from, simplest first: the
// result fields', the tools' and their latches, then the pairs of result
// atoms; none reads the hazard's field, and of atoms holding at the same
// events (the hazard's among them) only the first is kept.
func candidates(fv *resultFields, hazard atom, eps episodeSet, ts component.TelemetrySettings) ([]atom, error) {
	before := eps.beforeHazard(hazard)
	constant := func(a atom) bool { return a.constant(before) }
	fields := slices.DeleteFunc(fv.atoms(before), func(a atom) bool { return sharesField(a, hazard) })
	tools, err := toolAtoms(eps, ts)
	if err != nil {
		return nil, err
	}
	tools = slices.DeleteFunc(tools, constant)
	all := slices.Concat([]atom{hazard}, fields, tools, slices.DeleteFunc(latches(eps, tools), constant), conjunctions(fields, before))
	return uniqueNames(distinct(all, before))[1:], nil
}

// beforeHazard marks, per event, those before the first hazard of their
// episode: the events P_safe is predicted at.
func (eps episodeSet) beforeHazard(hazard atom) []bool {
	out := make([]bool, len(hazard.holds))
	for e := range eps.events {
		for k := eps.first[e]; k < eps.first[e]+len(eps.events[e]) && !hazard.holds[k]; k++ {
			out[k] = true
		}
	}
	return out
}

// uniqueNames renames an atom whose name an earlier one has (a field
// called tool_x beside the tool x): the configuration's names must differ.
func uniqueNames(atoms []atom) []atom {
	seen := map[string]bool{}
	for i := range atoms {
		n := atoms[i].name
		for k := 2; seen[n]; k++ {
			n = fmt.Sprintf("%s_%d", atoms[i].name, k)
		}
		atoms[i].name, seen[n] = n, true
	}
	return atoms
}

// smoothings are the estimators tried: Laplace's α decides how much a row
// seen a few times leans towards every valid successor (the hazard among
// them), which a small data set cannot afford. The predicates are chosen
// under the first, a middle way; the chain's smoothing then among them all.
var smoothings = []dtmc.Smoothing{
	{Mode: dtmc.Laplace, Alpha: 0.1}, {Mode: dtmc.Laplace, Alpha: 1}, {Mode: dtmc.Laplace, Alpha: 0.01}, {Mode: dtmc.Frequency},
}

// chooseWithSmoothing chooses the predicates, then the smoothing of their
// chain: the best cross-validated top area, then Brier score (what a
// smoothing changes is how far P_safe is from the counts). Choosing the
// predicates under every smoothing would learn four times the chains for
// choices that differ by chance.
func (a *abstraction) chooseWithSmoothing(eps episodeSet, cands []atom, o abstractOptions) error {
	a.smoothing = smoothings[0]
	if err := a.choose(eps, cands, o); err != nil {
		return err
	}
	preds := append([]atom{a.hazard}, a.chosen...)
	a.final = a.steps[len(a.steps)-1].cvScores
	chosen := a.smoothing
	for _, sm := range smoothings[1:] {
		a.smoothing = sm
		sc, err := a.crossValidate(eps, preds)
		if err != nil {
			return err
		}
		if sc.area > a.final.area || (sc.area == a.final.area && sc.brier < a.final.brier) {
			chosen, a.final = sm, sc
		}
	}
	a.smoothing = chosen
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

// unsafe reports whether episode e reaches the hazard.
func (eps episodeSet) unsafe(hazard atom, e int) bool {
	return slices.Contains(hazard.holds[eps.first[e]:eps.first[e]+len(eps.events[e])], true)
}

// choose adds atoms greedily, the best first, while one raises the
// cross-validated top area by at least --min-improvement and by more than
// chance would (gainSE); where none does, it tries exchanging a chosen atom
// for another, and then adding again: an atom chosen first for standing in
// for two others is exchanged for the second once the first is in, which
// adding alone never does. An atom whose removal costs nothing is removed.
// Two facts that tell apart together what neither does alone (the stove
// on, and nobody in the kitchen) are one atom, a conjunction, among the
// candidates. The predicates left then go to the Brier score
// (bestCalibration).
func (a *abstraction) choose(eps episodeSet, cands []atom, o abstractOptions) error {
	preds := []atom{a.hazard}
	best, err := a.crossValidate(eps, preds)
	if err != nil {
		return err
	}
	a.steps = append(a.steps, selectionStep{"(the hazard alone)", best})
	for {
		next, sc, how, err := a.bestMove(eps, preds, cands, best, o)
		if err != nil {
			return err
		}
		if next == nil {
			break
		}
		preds, best = next, sc
		a.steps = append(a.steps, selectionStep{how, best})
	}
	chosen := len(preds) - 1 // the filled thresholds do not count against --max-predicates
	if filled, how := fillThresholds(preds, cands); o.fillScale && how != "" {
		sc, err := a.crossValidate(eps, filled)
		if err != nil {
			return err
		}
		preds, best = filled, sc
		a.steps = append(a.steps, selectionStep{how, best})
	}
	for ; chosen < o.maxPredicates; chosen++ {
		add, sc, err := a.bestCalibration(eps, preds, cands, best)
		if err != nil {
			return err
		}
		if add == nil {
			break
		}
		preds, best = append(preds, *add), sc
		a.steps = append(a.steps, selectionStep{"+ " + add.name + " (Brier)", best})
	}
	a.chosen = preds[1:]
	return nil
}

// fillThresholds adds to preds, on each number chosen at two thresholds or
// more, the candidates' thresholds between the lowest and the highest
// chosen, and says which; "" when there are none. Two thresholds chosen on
// one number make it a scale of risk, and where on that scale the risk
// crosses θ is what another agent's clock moves most (an agent that waits
// five minutes at a time warns from five, where the training agent's
// safe runs lingering there put the cut at six): the scale is kept whole,
// for θ to choose the step, at the cost of a few states (nested thresholds
// add one state each per valuation of the rest), even where the training
// episodes alone cannot tell the steps apart. They do not count against
// --max-predicates: they refine a chosen fact.
func fillThresholds(preds, cands []atom) ([]atom, string) {
	var added []string
	out := slices.Clone(preds)
	for _, field := range thresholdFields(preds[1:]) {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range preds[1:] {
			if f, t, ok := p.threshold(); ok && f == field {
				lo, hi = min(lo, t), max(hi, t)
			}
		}
		for _, c := range cands {
			f, t, ok := c.threshold()
			if ok && f == field && t > lo && t < hi && !slices.ContainsFunc(out, func(p atom) bool { return p.name == c.name }) {
				out, added = append(out, c), append(added, c.name)
			}
		}
	}
	if len(added) == 0 {
		return preds, ""
	}
	return out, "+ " + strings.Join(added, ", ") + " (filling the scale)"
}

// thresholdFields are the numbers chosen at two thresholds or more, in
// the order of their first.
func thresholdFields(chosen []atom) []string {
	count := map[string]int{}
	var out []string
	for _, p := range chosen {
		if f, _, ok := p.threshold(); ok {
			if count[f]++; count[f] == 2 {
				out = append(out, f)
			}
		}
	}
	return out
}

// bestCalibration is the candidate whose addition lowers the cross-validated
// Brier score most, by more than chance would, without lowering the top
// area; nil when there is none. The ranking is chosen first: the
// predicates left then go to what P_safe says, which risk shows, warnings
// carry and θ is set against; a chain no better than the base rate there
// knows nothing a user can read.
func (a *abstraction) bestCalibration(eps episodeSet, preds, cands []atom, best cvScores) (*atom, cvScores, error) {
	keepsArea := func(sc cvScores) bool { return sc.area >= best.area }
	lowerBrier := func(x, y cvScores) bool { return x.brier < y.brier }
	pick, sc, err := a.bestAddition(eps, preds, cands, keepsArea, lowerBrier)
	if err != nil || pick == nil || best.brier-sc.brier <= brierGainSE(best.lowest, sc.lowest, best.predictions) {
		return nil, best, err
	}
	return pick, sc, nil
}

// bestMove is the next choice from preds: an atom added if one gains,
// else a chosen atom exchanged for another if that gains, else nil; first,
// a chosen atom whose removal scores no worse, removed.
func (a *abstraction) bestMove(eps episodeSet, preds, cands []atom, best cvScores, o abstractOptions) ([]atom, cvScores, string, error) {
	for i := 1; i < len(preds) && len(preds) > 2; i++ {
		without := slices.Delete(slices.Clone(preds), i, i+1)
		sc, err := a.crossValidate(eps, without)
		if err != nil {
			return nil, best, "", err
		}
		if !better(best, sc) {
			return without, sc, "- " + preds[i].name, nil
		}
	}
	if len(preds)-1 < o.maxPredicates {
		add, sc, err := a.bestAddition(eps, preds, cands, anyScore, better)
		if err != nil {
			return nil, best, "", err
		}
		if add != nil && a.gains(best, sc, o.minImprovement) {
			return append(slices.Clone(preds), *add), sc, "+ " + add.name, nil
		}
	}
	return a.bestExchange(eps, preds, cands, best, o.minImprovement)
}

// bestExchange is preds with the chosen atom and the candidate exchanged
// that score best, if that gains; else nil.
func (a *abstraction) bestExchange(eps episodeSet, preds, cands []atom, best cvScores, minImprovement float64) ([]atom, cvScores, string, error) {
	var pick []atom
	var pickScores cvScores
	var how string
	for i := 1; i < len(preds); i++ {
		without := slices.Delete(slices.Clone(preds), i, i+1)
		add, sc, err := a.bestAddition(eps, without, excluding(cands, preds[i]), anyScore, better)
		if err != nil {
			return nil, best, "", err
		}
		if add != nil && (pick == nil || better(sc, pickScores)) {
			pick, pickScores, how = slices.Insert(without, i, *add), sc, fmt.Sprintf("%s for %s", add.name, preds[i].name)
		}
	}
	if pick == nil || !a.gains(best, pickScores, minImprovement) {
		return nil, best, "", nil
	}
	return pick, pickScores, how, nil
}

// excluding is cands without x.
func excluding(cands []atom, x atom) []atom {
	return slices.DeleteFunc(slices.Clone(cands), func(c atom) bool { return c.name == x.name })
}

// gains reports whether sc is worth an addition to what scored best.
func (a *abstraction) gains(best, sc cvScores, minImprovement float64) bool {
	gain := sc.area - best.area
	return gain >= minImprovement && gain > gainSE(best.lowest, sc.lowest, a.minWarned)
}

// better orders scores: the top area, then the whole area, then the Brier
// score (ties in the front's last stretch are common: a few hard episodes
// decide it).
func better(x, y cvScores) bool {
	if x.area != y.area {
		return x.area > y.area
	}
	if x.auc != y.auc {
		return x.auc > y.auc
	}
	return x.brier < y.brier
}

// bestAddition is, of the candidates not chosen yet whose addition to
// preds scores as ok accepts, the one that scores best by prefer (the
// earlier, simpler one among equals), with its scores; nil when there is
// none.
func (a *abstraction) bestAddition(eps episodeSet, preds, cands []atom, ok func(cvScores) bool, prefer func(x, y cvScores) bool) (*atom, cvScores, error) {
	var pick *atom
	var pickScores cvScores
	for i, c := range cands {
		if slices.ContainsFunc(preds, func(p atom) bool { return p.name == c.name }) {
			continue
		}
		sc, err := a.crossValidate(eps, append(slices.Clone(preds), c))
		if err != nil {
			return nil, cvScores{}, err
		}
		if ok(sc) && (pick == nil || prefer(sc, pickScores)) {
			pick, pickScores = &cands[i], sc
		}
	}
	return pick, pickScores, nil
}

func anyScore(cvScores) bool { return true }

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
	states := eps.states(preds)
	byFold, err := eps.foldCounts(states, 1)
	if err != nil {
		return err
	}
	g, err := a.guardOf(preds, byFold[0])
	if err != nil {
		return err
	}
	all := eps.runs(states)
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
		pred := map[string]any{"name": p.name}
		maps.Copy(pred, p.predicate())
		preds = append(preds, pred)
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
		"# by %d-fold cross-validated area under the front from %g%% of the unsafe episodes warned, then Brier score;\n"+
		"# the threshold is the held-in front's point warning the most unsafe episodes with at most 10%% false alarms.\n"+
		"# The report is on stderr.\n", a.episodes, a.unsafe, len(a.chosen), a.atoms, a.folds, 100*a.minWarned)
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
	fmt.Fprintf(w, "selection, %d-fold cross-validated, smoothing %s: the area under the front of warned against false alarms\n"+
		"from %g%% of the unsafe episodes warned (top), the whole front's (area), and the Brier score of P_safe at every\n"+
		"event before the hazard (predicting the base rate: %.4f):\n",
		a.folds, smoothingText(smoothings[0]), 100*a.minWarned, a.steps[0].base)
	for _, s := range a.steps {
		fmt.Fprintf(w, "  %-48s top %.4f  area %.4f  Brier %.4f over %d predictions\n", s.added, s.area, s.auc, s.brier, s.predictions)
	}
	fmt.Fprintf(w, "the chain's smoothing, chosen after: %s (top %.4f  area %.4f  Brier %.4f)\n",
		smoothingText(a.smoothing), a.final.area, a.final.auc, a.final.brier)
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
