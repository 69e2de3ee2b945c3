// SPDX-License-Identifier: Apache-2.0

// Command compare sets three ways of warning about the household agent's
// stove side by side, judged on held-out episodes only:
//
//   - the rule "stove on and out of the kitchen": a warning at every such
//     tool call, no model;
//   - the ProbGuard paper's abstraction (baselines/paper.yaml: stove on, in
//     the kitchen, away 5 and 10 minutes; Laplace over all moves), learned on
//     the training episodes;
//   - the example's (collector.yaml), learned on the same episodes.
//
// Each chain is learned with `agentguard learn` and judged with `agentguard
// evaluate --format json` (its exact sweep of θ); the rule is judged here
// from the states the tools reported. Then, for each point of each
// baseline's Pareto front, it looks for a θ where the example warns at least
// as many unsafe runs in time with strictly fewer false alarms.
//
//	go run ./test/scenarios/household-compare -train dist/household-loop/train/spans.jsonl -heldout dist/household-loop/heldout/spans.jsonl
//
// It writes the two learned models and the example's evaluation picture
// (evaluate --svg) beside -out. Exit 1 when the example does not beat both.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

func main() {
	train := flag.String("train", "", "the training episodes: an OTLP/JSON file, one request a line")
	heldOut := flag.String("heldout", "", "the held-out episodes, from another seed")
	example := flag.String("example", "examples/household/collector.yaml", "the example's configuration")
	paper := flag.String("paper", "examples/household/baselines/paper.yaml", "the paper's abstraction")
	out := flag.String("out", "dist/household-loop/compare", "where the learned models and the picture go")
	flag.Parse()
	if *train == "" || *heldOut == "" {
		fmt.Fprintln(os.Stderr, "compare: -train and -heldout are required")
		os.Exit(2)
	}
	beats, err := run(*train, *heldOut, *example, *paper, *out, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(2)
	}
	if !beats {
		os.Exit(1)
	}
}

// point is one θ of a Pareto front (the rule has one, with no θ).
type point struct {
	Theta       float64 `json:"theta"`
	Above       float64 `json:"theta_above"`
	UpTo        float64 `json:"theta_up_to"`
	Warned      int     `json:"unsafe_runs_warned_in_time"`
	FalseAlarms int     `json:"safe_runs_warned"`
	Pareto      bool    `json:"pareto"`
	Lead        *struct {
		Events struct {
			P50 float64 `json:"p50"`
		} `json:"events"`
	} `json:"lead"`
}

// evaluation is what evaluate --format json says that compare reads.
type evaluation struct {
	Unsafe int     `json:"unsafe_runs"`
	Safe   int     `json:"safe_runs"`
	Sweep  []point `json:"sweep"`
	Cal    struct {
		Brier float64 `json:"brier"`
	} `json:"calibration"`
}

func (ev *evaluation) front() []point {
	var f []point
	for _, p := range ev.Sweep {
		if p.Pareto && p.Warned > 0 {
			f = append(f, p)
		}
	}
	return f
}

func run(train, heldOut, example, paper, out string, w io.Writer) (bool, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return false, err
	}
	bin := filepath.Join(out, "agentguard")
	if err := command("go", "build", "-o", bin, "./cmd/agentguard"); err != nil {
		return false, err
	}
	ex, err := learnAndEvaluate(bin, "example", example, train, heldOut, out)
	if err != nil {
		return false, err
	}
	pp, err := learnAndEvaluate(bin, "paper", paper, train, heldOut, out)
	if err != nil {
		return false, err
	}
	rule, err := judgeRule(heldOut)
	if err != nil {
		return false, err
	}
	if rule.unsafe != ex.Unsafe || rule.safe != ex.Safe || pp.Unsafe != ex.Unsafe {
		return false, fmt.Errorf("the three disagree on which runs are unsafe: rule %d/%d, paper %d/%d, example %d/%d",
			rule.unsafe, rule.safe, pp.Unsafe, pp.Safe, ex.Unsafe, ex.Safe)
	}
	fmt.Fprintf(w, "held-out: %d episodes, %d unsafe, %d safe (training: %s)\n\n", ex.Unsafe+ex.Safe, ex.Unsafe, ex.Safe, train)
	printTable(w, rule, pp, ex, example)
	fmt.Fprintf(w, "\nBrier score of P_safe: paper %.4f, example %.4f\n\n", pp.Cal.Brier, ex.Cal.Brier)
	beatsRule := beats(w, ex, "the rule", []point{{Warned: rule.warned, FalseAlarms: rule.falseAlarms}})
	beatsPaper := beats(w, ex, "the paper's chain", pp.front())
	return beatsRule && beatsPaper, nil
}

// learnAndEvaluate learns a chain on the training episodes with config (the
// model as out/NAME-model.json) and evaluates it on the held-out ones; the
// example's evaluation also draws its picture, out/example.svg.
func learnAndEvaluate(bin, name, config, train, heldOut, out string) (*evaluation, error) {
	model := filepath.Join(out, name+"-model.json")
	if err := command(bin, "learn", "--config", config, "-o", model, train); err != nil {
		return nil, err
	}
	args := []string{"evaluate", "--config", config, "--model", model, "--format", "json"}
	if name == "example" {
		args = append(args, "--svg", filepath.Join(out, "example.svg"))
	}
	args = append(args, heldOut)
	var stdout bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	var ev evaluation
	return &ev, json.Unmarshal(stdout.Bytes(), &ev)
}

// printTable prints the three side by side as a Markdown table: the rule,
// then each point of the paper's and the example's Pareto fronts.
func printTable(w io.Writer, rule ruleOutcome, pp, ex *evaluation, example string) {
	fmt.Fprintln(w, "| abstraction | θ | unsafe runs warned in time | false alarms on safe runs | median lead (events) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	share := func(n, of int) string {
		return fmt.Sprintf("%d/%d (%.1f%%)", n, of, 100*float64(n)/float64(max(of, 1)))
	}
	fmt.Fprintf(w, "| rule: stove on and out of the kitchen | – | %s | %s | %g |\n", share(rule.warned, rule.unsafe), share(rule.falseAlarms, rule.safe), rule.medianLead)
	for _, row := range []struct {
		name string
		ev   *evaluation
	}{{"paper: stove on, in kitchen, away ≥ 5, ≥ 10 min; Laplace over all moves", pp}, {"example: " + example, ex}} {
		for _, p := range row.ev.front() {
			lead := "–"
			if p.Lead != nil {
				lead = fmt.Sprint(p.Lead.Events.P50)
			}
			fmt.Fprintf(w, "| %s | %g | %s | %s | %s |\n", row.name, p.Theta, share(p.Warned, ex.Unsafe), share(p.FalseAlarms, ex.Safe), lead)
		}
	}
}

// beats reports whether, for each point of a baseline's front, the example
// has a θ that warns at least as many unsafe runs in time with strictly
// fewer false alarms, and prints each comparison.
func beats(w io.Writer, ex *evaluation, name string, base []point) bool {
	all := true
	for _, b := range base {
		i := slices.IndexFunc(ex.front(), func(p point) bool { return p.Warned >= b.Warned && p.FalseAlarms < b.FalseAlarms })
		if i < 0 {
			all = false
			fmt.Fprintf(w, "NOT BEATEN: %s warning %d unsafe runs with %d false alarms: no θ of the example warns as many with fewer\n", name, b.Warned, b.FalseAlarms)
			continue
		}
		p := ex.front()[i]
		fmt.Fprintf(w, "beaten: %s warns %d unsafe runs in time with %d false alarms; the example at θ %g warns %d with %d\n",
			name, b.Warned, b.FalseAlarms, p.Theta, p.Warned, p.FalseAlarms)
	}
	return all
}

func command(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return nil
}

// ruleOutcome is the rule judged over the held-out runs.
type ruleOutcome struct {
	unsafe, safe, warned, falseAlarms int
	medianLead                        float64
}

// toolCall is a tool span's start and the house it reported.
type toolCall struct {
	start uint64
	state struct {
		Room    string `json:"room"`
		StoveOn bool   `json:"stove_on"`
		Unsafe  bool   `json:"unsafe"`
	}
}

// judgeRule reads the held-out episodes' tool spans (grouped by session.id,
// in start order) and warns at every call whose reported state has the stove
// on and the agent out of the kitchen; a run is warned in time when such a
// call comes before its first unsafe one.
func judgeRule(path string) (ruleOutcome, error) {
	runs, err := readToolCalls(path)
	if err != nil {
		return ruleOutcome{}, err
	}
	var o ruleOutcome
	var leads []float64
	for _, calls := range runs {
		slices.SortStableFunc(calls, func(a, b toolCall) int { return cmp.Compare(a.start, b.start) })
		firstUnsafe, firstWarn := -1, -1
		for i, c := range calls {
			if c.state.Unsafe {
				firstUnsafe = i
				break
			}
			if firstWarn < 0 && c.state.StoveOn && c.state.Room != "kitchen" {
				firstWarn = i
			}
		}
		switch {
		case firstUnsafe >= 0:
			o.unsafe++
			if firstWarn >= 0 {
				o.warned++
				leads = append(leads, float64(firstUnsafe-firstWarn))
			}
		default:
			o.safe++
			if firstWarn >= 0 {
				o.falseAlarms++
			}
		}
	}
	if len(leads) > 0 {
		slices.Sort(leads)
		o.medianLead = leads[(len(leads)+1)/2-1]
	}
	return o, nil
}

func readToolCalls(path string) (map[string][]toolCall, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	runs := map[string][]toolCall{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	var u ptrace.JSONUnmarshaler
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		td, err := u.UnmarshalTraces(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					if kind, _ := s.Attributes().Get("openinference.span.kind"); kind.Str() != "TOOL" {
						continue
					}
					c, err := decodeCall(s)
					if err != nil {
						return nil, fmt.Errorf("%s:%d: span %s: %w", path, line, s.SpanID(), err)
					}
					session, _ := s.Attributes().Get("session.id")
					runs[session.Str()] = append(runs[session.Str()], c)
				}
			}
		}
	}
	return runs, sc.Err()
}

// decodeCall reads the house from output.value: a LangChain ToolMessage
// whose content is the state as JSON.
func decodeCall(s ptrace.Span) (toolCall, error) {
	c := toolCall{start: uint64(s.StartTimestamp())}
	out, ok := s.Attributes().Get("output.value")
	if !ok {
		return c, errors.New("no output.value")
	}
	var msg struct {
		Output struct {
			Kwargs struct {
				Content string `json:"content"`
			} `json:"kwargs"`
		} `json:"output"`
	}
	if err := json.Unmarshal([]byte(out.Str()), &msg); err != nil {
		return c, fmt.Errorf("output.value: %w", err)
	}
	if err := json.Unmarshal([]byte(msg.Output.Kwargs.Content), &c.state); err != nil {
		return c, fmt.Errorf("output.value's content %q: %w", msg.Output.Kwargs.Content, err)
	}
	return c, nil
}
