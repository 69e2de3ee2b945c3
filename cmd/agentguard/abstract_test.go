// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/internal/core/sequence"
)

var householdEpisodes = []string{
	filepath.Join("..", "..", "testdata", "mining", "household", "safe.jsonl"),
	filepath.Join("..", "..", "testdata", "mining", "household", "unsafe.jsonl"),
}

// On the household agent's 40 recorded episodes, abstract chooses
// predicates over the house state the tools return that raise the
// cross-validated area under the front well above the hazard's alone, with
// a Brier score that beats predicting the base rate, and writes a
// probguard block and model that risk and evaluate load as they are.
func TestAbstractHousehold(t *testing.T) {
	dir := t.TempDir()
	block, model := filepath.Join(dir, "abstraction.yaml"), filepath.Join(dir, "model.json")
	args := append([]string{"abstract", "--config", "../../examples/household/collector.yaml", "--hazard", "unsafe",
		"--out", block, "--model-out", model}, householdEpisodes...)
	code, _, report := runCmd(args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, report)
	}
	m := regexp.MustCompile(`predicting the base rate: (0\.\d+)\):\n(?:  .* over \d+ predictions\n)+the chain's smoothing, chosen after: .* Brier (0\.\d+)\)\n`).FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("no selection in the report:\n%s", report)
	}
	base, final := atof(t, m[1]), atof(t, m[2])
	if final >= base {
		t.Errorf("the chosen abstraction scores %.4f, no better than the base rate's %.4f:\n%s", final, base, report)
	}
	areas := regexp.MustCompile(`top (0\.\d+)`).FindAllStringSubmatch(report, -1)
	if len(areas) < 2 || atof(t, areas[len(areas)-1][1]) < atof(t, areas[0][1])+0.2 {
		t.Errorf("the area under the front did not rise well above the hazard's alone:\n%s", report)
	}
	for _, cmd := range [][]string{
		{"risk", "--config", block, "--samples", "0"},
		append([]string{"evaluate", "--config", block, "--samples", "0"}, householdEpisodes...),
	} {
		if code, out, errs := runCmd(cmd...); code != 0 {
			t.Errorf("%s on the written block: exit %d\n%s\n%s", cmd[0], code, out, errs)
		}
	}
	raw, err := os.ReadFile(block)
	if err != nil || !strings.Contains(string(raw), "unsafe: unsafe") || !strings.Contains(string(raw), "tool: '*'") {
		t.Errorf("block:\n%s (%v)", raw, err)
	}
}

func atof(t *testing.T, s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestAbstractBadInput(t *testing.T) {
	for _, c := range []struct {
		hazard, want string
	}{
		{"unsafee", `--hazard "unsafee": no tool result read carries the field "unsafee" (fields: `},
		{"room=attic", `--hazard "room=attic": it holds at no event of the episodes read`},
		{"", "--hazard is required"},
	} {
		args := append([]string{"abstract", "--config", "../../examples/household/collector.yaml", "--hazard", c.hazard,
			"--model-out", filepath.Join(t.TempDir(), "m.json")}, householdEpisodes...)
		if code, _, errs := runCmd(args...); code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("--hazard %q: exit %d\n%s", c.hazard, code, errs)
		}
	}
}

// householdTraining reads the household agent's recorded episodes as
// abstract does, and its candidates for the hazard unsafe.
func householdTraining(t *testing.T) (training, atom, []atom) {
	t.Helper()
	o := abstractOptions{hazard: "unsafe", files: householdEpisodes}
	o.config = "../../examples/household/collector.yaml"
	tr, err := readTraining(o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	hazard, err := tr.fields.parseHazard(o.hazard)
	if err != nil {
		t.Fatal(err)
	}
	cands, err := candidates(tr.fields, hazard, tr.eps, tr.telemetry)
	if err != nil {
		t.Fatal(err)
	}
	return tr, hazard, cands
}

// Every candidate abstract proposes on the household episodes, written as
// the probguard predicate abstract would write, holds at exactly the
// events where abstract computed it holds, as the processor's own
// sequencing evaluates it (latches folded, per conversation): the result
// fields', their conjunctions, the tools' and their latches, each kind
// among them.
func TestAbstractCandidatesAreWhatProbguardEvaluates(t *testing.T) {
	tr, hazard, cands := householdTraining(t)
	kinds := map[string]int{}
	for _, c := range cands {
		switch {
		case len(c.result) == 2:
			kinds["conjunction"]++
		case c.call["set"] != nil:
			kinds["latch"]++
		case c.call["tool"] != nil:
			kinds["tool"]++
		default:
			kinds["field"]++
		}
	}
	for _, k := range []string{"field", "conjunction", "tool", "latch"} {
		if kinds[k] == 0 {
			t.Errorf("no %s among the %d candidates: %v", k, len(cands), kinds)
		}
	}
	dir := t.TempDir()
	for i, chunk := range slices.Collect(slices.Chunk(cands, 15)) {
		a := &abstraction{cfg: tr.cfg, hazard: hazard, chosen: chunk, smoothing: smoothings[0], theta: 0.5}
		path := filepath.Join(dir, fmt.Sprintf("chunk%d.yaml", i))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.writeBlock(f, "model.json"); err != nil {
			t.Fatal(err)
		}
		f.Close()
		id, cfg, err := readProbguardConfig(path, "")
		if err != nil {
			t.Fatal(err)
		}
		in, err := readGroups("test", id, cfg, householdEpisodes, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if len(in.groups) != len(tr.eps.events) {
			t.Fatalf("%d groups, abstract read %d", len(in.groups), len(tr.eps.events))
		}
		for e, g := range in.groups {
			for j, ev := range g.Events {
				for b, c := range append([]atom{hazard}, chunk...) {
					if got, want := ev.Bits>>uint(b)&1 == 1, c.holds[tr.eps.first[e]+j]; got != want {
						t.Fatalf("%s (%v) at event %d of episode %d: probguard %v, abstract %v", c.name, c.predicate(), j, e, got, want)
					}
				}
			}
		}
	}
}

// The thresholds and values are those of the events before the hazard:
// minutes away with the stove on reach 10 and more only where the house
// became unsafe, which predicts nothing; 5, the last step before it, is
// proposed.
func TestAbstractThresholdsBeforeTheHazard(t *testing.T) {
	_, _, cands := householdTraining(t)
	var thresholds []float64
	for _, c := range cands {
		if m, ok := c.result["minutes_away_with_stove_on"].(map[string]any); ok && len(c.result) == 1 {
			thresholds = append(thresholds, m["ge"].(float64))
		}
	}
	if !slices.Contains(thresholds, 5) || slices.ContainsFunc(thresholds, func(x float64) bool { return x >= 10 }) {
		t.Errorf("minutes_away_with_stove_on thresholds %v: want 5 among them, none of 10 or more", thresholds)
	}
}

// A conjunction is two result atoms of different fields, one of them a
// value: kept where it says what neither says alone.
func TestConjunctions(t *testing.T) {
	every := []bool{true, true, true, true}
	done := atom{name: "done", result: map[string]any{"done": map[string]any{"equals": true}}, holds: []bool{false, true, true, false}}
	far := atom{name: "away_ge_5", result: map[string]any{"away": map[string]any{"ge": 5.0}}, holds: []bool{true, true, false, false}}
	farther := atom{name: "away_ge_7", result: map[string]any{"away": map[string]any{"ge": 7.0}}, holds: []bool{true, false, false, false}}
	late := atom{name: "minutes_ge_9", result: map[string]any{"minutes": map[string]any{"ge": 9.0}}, holds: []bool{false, true, true, true}}
	inDone := atom{name: "ready", result: map[string]any{"ready": map[string]any{"equals": true}}, holds: []bool{false, true, true, true}}
	got := conjunctions([]atom{done, far, farther, late, inDone}, every)
	var desc []string
	for _, c := range got {
		desc = append(desc, fmt.Sprintf("%s %v %v", c.name, c.result, c.holds))
	}
	// Not: done and away ≥ 7, or ready and away ≥ 7 (never together); done
	// and ready, done and minutes ≥ 9 (done), minutes ≥ 9 and ready (both);
	// away ≥ 5 and ≥ 7 (one field); away and minutes (two thresholds).
	want := []string{
		"done_and_away_ge_5 map[away:map[ge:5] done:map[equals:true]] [false true false false]",
		"away_ge_5_and_ready map[away:map[ge:5] ready:map[equals:true]] [false true false false]",
	}
	if !slices.Equal(desc, want) {
		t.Errorf("conjunctions:\n%s\nwant\n%s", strings.Join(desc, "\n"), strings.Join(want, "\n"))
	}
}

// The top area weighs the unsafe episodes hardest to warn: it prefers a
// scoring that warns every unsafe episode at a cost to the easy ones,
// where the whole area prefers the one that leaves one unsafe episode
// among the safe ones. With minWarned 0 it is the whole area, the chance
// that an unsafe episode scores below a safe one (ties half).
func TestTopArea(t *testing.T) {
	scores := func(unsafe, safe []float64) []episodeScore {
		var out []episodeScore
		for _, u := range unsafe {
			out = append(out, episodeScore{low: u, unsafe: true})
		}
		for _, s := range safe {
			out = append(out, episodeScore{low: s})
		}
		return out
	}
	safe := []float64{0.3, 0.5, 0.9, 0.95}
	oneLeft := scores([]float64{0.1, 0.2, 0.9}, safe) // below 4, 4 and 1.5 of the 4 safe ones
	even := scores([]float64{0.4, 0.4, 0.45}, safe)   // below 3 each
	for _, c := range []struct {
		got, want float64
	}{
		{topArea(oneLeft, 0), 9.5 / 12}, {topArea(even, 0), 9.0 / 12},
		{topArea(oneLeft, 0.9), 1.5 / 4}, {topArea(even, 0.9), 3.0 / 4},
		{topArea(scores(nil, safe), 0.9), 0.5},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("top area %v, want %v", c.got, c.want)
		}
	}
	if se := gainSE(oneLeft, oneLeft, 0.9); se != 0 {
		t.Errorf("a scoring against itself: standard error %v, want 0", se)
	}
}

// synthetic makes episodes of three events from their kinds (episode e is
// of kind kinds[e%len(kinds)]), each kind the atoms that hold at each
// event (a string of atom letters per event, h the hazard); it returns the
// episodes and the atoms by letter, each named by its letter.
func synthetic(n int, kinds [][3]string, letters string) (episodeSet, map[rune]atom) {
	var eps episodeSet
	atoms := map[rune]atom{}
	for _, l := range letters {
		atoms[l] = atom{name: string(l), result: map[string]any{string(l): map[string]any{"equals": true}}}
	}
	for e := range n {
		eps.first = append(eps.first, e*3)
		eps.events = append(eps.events, make([]sequence.Event, 3))
		for _, at := range kinds[e%len(kinds)] {
			for l, a := range atoms {
				a.holds = append(a.holds, strings.ContainsRune(at, l))
				atoms[l] = a
			}
		}
	}
	return eps, atoms
}

func chooseOn(t *testing.T, eps episodeSet, hazard atom, cands []atom, minWarned float64, maxPredicates int) *abstraction {
	t.Helper()
	a := &abstraction{hazard: hazard, minWarned: minWarned, smoothing: smoothings[0], plan: eps.planFolds(hazard, 5)}
	if err := a.choose(eps, cands, abstractOptions{maxPredicates: maxPredicates, folds: 5, minImprovement: 0.001}); err != nil {
		t.Fatal(err)
	}
	return a
}

// Unsafe episodes pass through b or through c on their way to the hazard,
// and a holds at both and at safe episodes' d: a alone scores best, then a
// and b; exchanging a for c then tells every unsafe episode from every safe
// one, which adding one atom at a time, two at most, never reaches.
func TestChooseExchanges(t *testing.T) {
	ab, ac, a, none := [3]string{"", "ab", "h"}, [3]string{"", "ac", "h"}, [3]string{"", "a", ""}, [3]string{"", "", ""}
	eps, atoms := synthetic(60, [][3]string{ab, ab, ac, ac, a, a, none, none, none, none}, "abch")
	got := chooseOn(t, eps, atoms['h'], []atom{atoms['a'], atoms['b'], atoms['c']}, 0, 2)
	var steps []string
	for _, s := range got.steps {
		steps = append(steps, s.added)
	}
	// b and c are alike: which comes first is the folds' chance.
	if len(steps) != 4 || steps[1] != "+ a" || !strings.HasSuffix(steps[3], " for a") ||
		!slices.Equal(slices.Sorted(slices.Values(names(got.chosen))), []string{"b", "c"}) {
		t.Errorf("steps %q, chosen %v: want a, then b or c, then the other for a", steps, names(got.chosen))
	}
	if last := got.steps[len(got.steps)-1]; last.auc != 1 {
		t.Errorf("the exchanged chain's area %v, want 1", last.auc)
	}
}

// Unsafe episodes pass through r, as do as many safe ones; half the
// episodes are calm (c) and never near the hazard. r is chosen for the
// front; c tells nothing of the front (every unsafe episode is below every
// calm one already) but makes P_safe right at the calm episodes' events,
// and is chosen next, for the Brier score.
func TestChooseCalibrates(t *testing.T) {
	risky, near, calm := [3]string{"", "r", "h"}, [3]string{"", "r", ""}, [3]string{"", "c", "c"}
	eps, atoms := synthetic(40, [][3]string{risky, near, calm, calm}, "rch")
	got := chooseOn(t, eps, atoms['h'], []atom{atoms['c'], atoms['r']}, 0.9, 4)
	if names := names(got.chosen); !slices.Equal(names, []string{"r", "c"}) || got.steps[2].added != "+ c (Brier)" {
		t.Errorf("chosen %v, steps %v", names, got.steps)
	}
	if got.steps[2].brier >= got.steps[1].brier || got.steps[2].area != got.steps[1].area {
		t.Errorf("steps %v: want the Brier score lower, the top area the same", got.steps)
	}
}

// A number chosen at two thresholds is filled in with the candidates'
// thresholds between them, and only those: not a threshold outside them,
// not one on another number chosen once, not a conjunction.
func TestFillThresholds(t *testing.T) {
	ge := func(field string, t float64) atom {
		return atom{name: fmt.Sprintf("%s_ge_%g", field, t), result: map[string]any{field: map[string]any{"ge": t}}}
	}
	both := atom{name: "x3_and_z", result: map[string]any{"x": map[string]any{"ge": 3.0}, "z": map[string]any{"equals": true}}}
	hazard := atom{name: "unsafe", result: map[string]any{"unsafe": map[string]any{"equals": true}}}
	cands := []atom{ge("x", 1), ge("x", 2), ge("x", 3), ge("x", 4), ge("x", 5), ge("x", 6), ge("y", 1), ge("y", 2), ge("y", 3), both}
	got, how := fillThresholds([]atom{hazard, ge("x", 2), ge("y", 2), ge("x", 5)}, cands)
	if want := []string{"unsafe", "x_ge_2", "y_ge_2", "x_ge_5", "x_ge_3", "x_ge_4"}; !slices.Equal(names(got), want) {
		t.Errorf("filled %v, want %v", names(got), want)
	}
	if how != "+ x_ge_3, x_ge_4 (filling the scale)" {
		t.Errorf("step %q", how)
	}
	if got, how := fillThresholds([]atom{hazard, ge("x", 2), ge("x", 3)}, cands); len(got) != 3 || how != "" {
		t.Errorf("nothing between two neighbouring thresholds: %v %q", names(got), how)
	}
}
