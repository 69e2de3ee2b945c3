// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/formula"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/processor/probguard"
)

// The flags of a state in risk's table.
const (
	flagUnsafe = "UNSAFE" // the state satisfies unsafe: reaching it is the violation
	flagUnseen = "UNSEEN" // never visited in training: the guard reports it as unknown
	flagRisk   = "RISK"   // P_safe below the threshold: the guard warns there
)

// runRisk prints every state of a probguard model with what the processor
// would decide there: where the risk is, before any trace is scored.
func runRisk(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("risk", "--config COLLECTOR.yaml [--processor probguard/NAME] [--model MODEL.json] [--json]", stderr)
	var pf processorFlags
	pf.register(fs)
	modelPath := fs.String("model", "", "the JSON model `file` (default: the processor's model:, relative to the current directory as the collector opens it)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	samples := fs.Int("samples", 400, "chains drawn from the posterior of the counts for each state's credible interval of P_safe; 0: no intervals")
	level := fs.Float64("level", 0.9, "the credible intervals' probability")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "agentguard risk:", err)
		return 2
	}
	if fs.NArg() > 0 {
		return fail(fmt.Errorf("unexpected arguments %q: risk reads no trace files", fs.Args()))
	}
	r, err := risk(pf, *modelPath, dtmc.PosteriorOptions{Samples: *samples, Level: *level}, stderr)
	if err != nil {
		return fail(err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(r)
	} else {
		err = r.writeText(stdout)
	}
	if err != nil {
		return fail(err)
	}
	return 0
}

// riskReport is risk's output.
type riskReport struct {
	Processor string      `json:"processor"`
	Property  string      `json:"property"`
	Threshold float64     `json:"threshold"`
	Model     string      `json:"model"`
	Traces    uint64      `json:"traces_learned"`
	States    []stateRisk `json:"states"`
}

// stateRisk is one state of the model as a fresh group entering it would be
// scored.
type stateRisk struct {
	State       string         `json:"state"`
	Holding     []string       `json:"holding"`
	Description string         `json:"description"`
	Visits      uint64         `json:"visits"` // events in the state in training; for end, runs ended
	Seen        bool           `json:"seen"`
	PSafe       float64        `json:"p_safe"`
	Flag        string         `json:"flag,omitempty"`
	Evidence    *stateEvidence `json:"evidence,omitempty"`
	// The credible interval of P_safe from the posterior of the counts, and
	// where it holds the threshold, about how many more visits would put
	// it on one side (-1: the interval is centred on the threshold).
	PSafeLow       *float64 `json:"p_safe_low,omitempty"`
	PSafeHigh      *float64 `json:"p_safe_high,omitempty"`
	VisitsToSettle *int64   `json:"visits_to_settle,omitempty"`
}

// stateEvidence is the successor contributing most to the risk.
type stateEvidence struct {
	To   string  `json:"to"`
	Move string  `json:"move"`
	P    float64 `json:"p"`
}

func risk(pf processorFlags, modelPath string, posterior dtmc.PosteriorOptions, stderr io.Writer) (*riskReport, error) {
	if err := pf.check(); err != nil {
		return nil, err
	}
	id, cfg, err := readProbguardConfig(pf.config, pf.name)
	if err != nil {
		return nil, err
	}
	path, m, err := servedModel(cfg, modelPath, stderr)
	if err != nil {
		return nil, err
	}
	g, err := newGuard(m, cfg.GuardOptions())
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	states, err := stateRisks(g)
	if err != nil {
		return nil, err
	}
	if posterior.Samples > 0 {
		if err := addIntervals(states, g, posterior); err != nil {
			return nil, fmt.Errorf("credible intervals: %w", err)
		}
	}
	return &riskReport{Processor: id.String(), Property: describeProperty(g.Options().Property), Threshold: g.Options().Threshold,
		Model: path, Traces: m.Counts().Traces(), States: states}, nil
}

// servedModel reads the model the processor would serve, --model or else
// its model:, and checks it was learned over the block's abstraction.
func servedModel(cfg *probguard.Config, override string, stderr io.Writer) (string, *dtmc.Model, error) {
	path := cmp.Or(override, cfg.Model)
	if path == "" {
		return "", nil, errors.New("no model: give --model, or set model: in the processor's block")
	}
	m, err := readModel(path, "", stderr)
	if err != nil {
		return "", nil, err
	}
	return path, m, cfg.Matches(m, path)
}

// newGuard solves the property on the model, as the processor does when it
// loads it.
func newGuard(m *dtmc.Model, opts guard.Options) (*guard.Guard, error) {
	sv, err := dtmc.NewSolver(dtmc.Options{})
	if err != nil {
		return nil, err
	}
	return guard.New(m, opts, sv)
}

// stateRisks lists the states by P_safe, riskiest first, then by name.
func stateRisks(g *guard.Guard) ([]stateRisk, error) {
	m := g.Model()
	var unsafe *formula.Formula
	if src := g.Options().Property.Unsafe; src != "" {
		var err error
		if unsafe, err = m.Formula(src); err != nil {
			return nil, fmt.Errorf("unsafe: %w", err)
		}
	}
	out := make([]stateRisk, len(m.States()))
	for i, s := range m.States() {
		out[i] = stateRisk{State: m.StateName(i), Holding: g.HoldingPredicates(s), Description: g.DescribeState(s),
			Visits: m.Visits(i), Seen: g.Seen(i), PSafe: g.Safety().PSafe(i)}
		if s == dtmc.End {
			out[i].Visits = endedRuns(m.Counts())
			out[i].Seen = out[i].Visits > 0
		}
		out[i].Flag = stateFlag(out[i], unsafe != nil && s != dtmc.End && unsafe.Eval(uint64(s)), g.Options().Threshold)
		if out[i].PSafe < 1 {
			ev := g.Safety().Evidence(i)
			out[i].Evidence = &stateEvidence{To: m.StateName(ev.State), Move: g.DescribeMove(s, ev), P: ev.Prob}
		}
	}
	slices.SortStableFunc(out, func(a, b stateRisk) int {
		return cmp.Or(cmp.Compare(a.PSafe, b.PSafe), strings.Compare(a.State, b.State))
	})
	return out, nil
}

// stateFlag is the one flag that says what the guard does in the state:
// unsafe first (a violation whatever the model knows), then unseen (an
// unknown state, its P_safe not used), then below the threshold.
func stateFlag(r stateRisk, unsafe bool, threshold float64) string {
	switch {
	case unsafe:
		return flagUnsafe
	case !r.Seen:
		return flagUnseen
	case r.PSafe < threshold:
		return flagRisk
	}
	return ""
}

func endedRuns(c *dtmc.Counts) uint64 {
	var n uint64
	for _, pc := range c.Pairs() {
		if pc.To == dtmc.End {
			n += pc.N
		}
	}
	return n
}

// describeProperty names the property and its parameters.
func describeProperty(p dtmc.Property) string {
	switch p.Kind {
	case dtmc.Bounded:
		return fmt.Sprintf("bounded (unsafe = %s within %d events)", p.Unsafe, p.Horizon)
	case dtmc.Response:
		return fmt.Sprintf("response (%s then %s within %d events)", p.Trigger, p.Response, p.Within)
	}
	return fmt.Sprintf("%s (unsafe = %s)", p.Kind, p.Unsafe)
}

// addIntervals sets each state's credible interval, and the visits that
// would settle a decision its interval leaves open.
func addIntervals(states []stateRisk, g *guard.Guard, o dtmc.PosteriorOptions) error {
	sv, err := dtmc.NewSolver(dtmc.Options{})
	if err != nil {
		return err
	}
	m := g.Model()
	ivs, err := m.PSafeIntervals(g.Options().Property, sv, o)
	if err != nil {
		return err
	}
	index := make(map[string]int, len(m.States()))
	for i := range m.States() {
		index[m.StateName(i)] = i
	}
	for k := range states {
		i := index[states[k].State]
		iv := ivs[i]
		states[k].PSafeLow, states[k].PSafeHigh = &iv.Low, &iv.High
		if n := dtmc.VisitsToSettle(iv, g.Options().Threshold, m.Visits(i)); n != 0 {
			states[k].VisitsToSettle = &n
		}
	}
	return nil
}

func (r *riskReport) writeText(w io.Writer) error {
	fmt.Fprintf(w, "%s: property %s, threshold %g; model %s, %d traces learned\n\n", r.Processor, r.Property, r.Threshold, r.Model, r.Traces)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tVISITS\tP_SAFE\tINTERVAL\tFLAG\tPREDICATES\tMOST LIKELY WAY TO UNSAFE")
	for _, s := range r.States {
		interval := "-"
		if s.PSafeLow != nil {
			interval = fmt.Sprintf("%.3f-%.3f", *s.PSafeLow, *s.PSafeHigh)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.4f\t%s\t%s\t%s", s.State, s.Visits, s.PSafe, interval, s.Flag, s.Description)
		// The last cell is written only when there is one: a cell ended by a
		// tab is padded, which would leave trailing blanks.
		if s.Evidence != nil {
			fmt.Fprintf(tw, "\t%s, p = %.4g", s.Evidence.Move, s.Evidence.P)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return r.writeUnsettled(w)
}

// writeUnsettled lists the states whose credible interval holds the
// threshold: the decision there could go either way.
func (r *riskReport) writeUnsettled(w io.Writer) error {
	var lines []string
	for _, s := range r.States {
		switch {
		case s.VisitsToSettle == nil:
		case s.Visits == 0:
			lines = append(lines, fmt.Sprintf("  %s (0 visits): never visited: its interval is the prior's alone", s.State))
		case *s.VisitsToSettle < 0:
			lines = append(lines, fmt.Sprintf("  %s (%d visits): its interval is centred on the threshold; more visits will tell", s.State, s.Visits))
		default:
			lines = append(lines, fmt.Sprintf("  %s (%d visits): about %d more visits would settle this decision", s.State, s.Visits, *s.VisitsToSettle))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "\nStates whose credible interval holds the threshold %g (the data do not yet say which side they are on):\n%s\n",
		r.Threshold, strings.Join(lines, "\n"))
	return err
}
