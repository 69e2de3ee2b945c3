// SPDX-License-Identifier: Apache-2.0

package guard

import (
	"math"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

// The stove of spec V1/V2: bit 0 fork_on_burner, bit 1 knob_on.
const (
	s0, s1, s2, s3 = uint64(0b00), uint64(0b10), uint64(0b01), uint64(0b11)
	stoveUnsafe    = "fork_on_burner and knob_on"
)

func stoveModel(t testing.TB) *dtmc.Model {
	c := dtmc.NewCounts()
	for range 30 {
		st := []dtmc.State{0, 0, 0, 0, 0, 0, 0b10}
		if err := c.AddTrace(st); err != nil {
			t.Fatal(err)
		}
	}
	m, err := dtmc.Learn(dtmc.Spec{Predicates: []string{"fork_on_burner", "knob_on"}, Rules: dtmc.Rules{MaxChanges: 1}, Unsafe: stoveUnsafe}, c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newGuard(t testing.TB, m *dtmc.Model, opts Options) *Guard {
	sv, err := dtmc.NewSolver(dtmc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(m, opts, sv)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func stoveGuard(t testing.TB, threshold float64, report Report, unknown Unknown) *Guard {
	return newGuard(t, stoveModel(t), Options{
		Property:  dtmc.Property{Kind: dtmc.AlwaysSafe, Unsafe: stoveUnsafe},
		Threshold: threshold, Report: report, Unknown: unknown,
	})
}

func TestPSafeOfV1(t *testing.T) {
	g := stoveGuard(t, 0.5, ReportCrossing, UnknownAlert)
	var r Run
	want := map[uint64]float64{s0: 335.0 / 349, s1: 338.0 / 349, s3: 0}
	for _, bits := range []uint64{s0, s1, s3} {
		d := g.Step(&r, bits)
		if math.Abs(d.PSafe-want[bits]) > 1e-12 {
			t.Errorf("P_safe(%s) = %.15f, want %.15f", g.StateName(d.State), d.PSafe, want[bits])
		}
	}
}

// With θ between P_safe(s0) ≈ 0.9599 and P_safe(s1) ≈ 0.9685, s0 is below
// and s1 is not: crossing reports each return to s0, every reports each s0.
func TestReportCrossingAndEvery(t *testing.T) {
	seq := []uint64{s0, s0, s1, s0, s0}
	for _, tc := range []struct {
		report Report
		want   []bool
	}{
		{ReportCrossing, []bool{true, false, false, true, false}},
		{ReportEvery, []bool{true, true, false, true, true}},
	} {
		g := stoveGuard(t, 0.965, tc.report, UnknownAlert)
		var r Run
		for i, bits := range seq {
			d := g.Step(&r, bits)
			if d.Report != tc.want[i] || d.Below != (bits == s0) || !d.Known || d.Violation {
				t.Errorf("%s: event %d: %+v", tc.report, i, d)
			}
		}
	}
}

func TestUnknownStateIsNeverSafe(t *testing.T) {
	for _, unknown := range []Unknown{UnknownAlert, UnknownPass} {
		g := stoveGuard(t, 0.5, ReportCrossing, unknown)
		var r Run
		d := g.Step(&r, s2) // f1k0: in the space, never visited
		if d.Known || !math.IsNaN(d.PSafe) || d.Below || d.Report != (unknown == UnknownAlert) {
			t.Errorf("%s: %+v", unknown, d)
		}
		if got := g.Explain(d); !strings.Contains(got, "never seen") {
			t.Errorf("explanation %q", got)
		}
	}
}

func TestViolationIsAlwaysReported(t *testing.T) {
	g := stoveGuard(t, 0.1, ReportCrossing, UnknownPass)
	var r Run
	d := g.Step(&r, s3)
	if !d.Violation || !d.Report || d.PSafe != 0 {
		t.Fatalf("%+v", d)
	}
	span := ptrace.NewSpan()
	g.Annotate(span, d, "g1", 1)
	if v, _ := span.Attributes().Get(verdictattr.Violation); !v.Bool() {
		t.Error("span not marked as a violation")
	}
}

func TestEvidenceAndExplanation(t *testing.T) {
	g := stoveGuard(t, 0.97, ReportCrossing, UnknownAlert)
	var r Run
	d := g.Step(&r, s1) // f0k1: the risk is fork onto the burner (to s3)
	if g.StateName(g.Model().States()[d.Evidence.State]) != "11" || math.Abs(d.Evidence.Prob-1.0/34) > 1e-15 {
		t.Fatalf("evidence %+v", d.Evidence)
	}
	want := "P(stay safe) = 0.9685 < 0.97 in state knob_on, not fork_on_burner; most likely way to unsafe: fork_on_burner becomes true, p = 0.02941"
	if got := g.Explain(d); got != want {
		t.Errorf("explanation\n got %q\nwant %q", got, want)
	}
}

func TestAnnotationAttributes(t *testing.T) {
	g := stoveGuard(t, 0.97, ReportCrossing, UnknownAlert)
	var r Run
	d := g.Step(&r, s1)
	span := ptrace.NewSpan()
	g.Annotate(span, d, "conv-1", 3)
	if span.Events().Len() != 1 {
		t.Fatalf("%d events", span.Events().Len())
	}
	got := span.Events().At(0).Attributes().AsRaw()
	want := map[string]any{
		verdictattr.EvaluationName: "always_safe", verdictattr.ScoreLabel: verdictattr.LabelRisk,
		verdictattr.ScoreValue: d.PSafe, verdictattr.Check: verdictattr.CheckProb, verdictattr.Group: "conv-1",
		verdictattr.State: "01", verdictattr.PSafe: d.PSafe, verdictattr.EventNumber: int64(3), verdictattr.Threshold: 0.97,
		verdictattr.EvidenceNextState: "11", verdictattr.EvidenceProbability: 1.0 / 34,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if holds := got[verdictattr.StateHolds].([]any); len(holds) != 1 || holds[0] != "knob_on" {
		t.Errorf("holds %v", holds)
	}
	if _, ok := span.Attributes().Get(verdictattr.Violation); ok {
		t.Error("a risk is not a violation")
	}
}

func TestBoundedHorizon(t *testing.T) {
	g := newGuard(t, stoveModel(t), Options{
		Property:  dtmc.Property{Kind: dtmc.Bounded, Unsafe: stoveUnsafe, Horizon: 10},
		Threshold: 0.5, Report: ReportCrossing, Unknown: UnknownAlert,
	})
	var r Run
	if d := g.Step(&r, s0); math.Abs(d.PSafe-(1-0.0325200768)) > 1e-10 {
		t.Errorf("bounded P_safe(s0) = %.12f", d.PSafe)
	}
}

// Spec V3 learned by frequency: 00 → a (1); a → a (2/5), a → b (3/5). The
// trigger holds in 00, the response in b, K = 2: P_safe = 3/5.
func TestResponseProductV3(t *testing.T) {
	const none, a, b = dtmc.State(0), dtmc.State(0b01), dtmc.State(0b10)
	c := dtmc.NewCounts()
	for _, tr := range [][]dtmc.State{{none, a, a, a, b}, {a, b}, {a, b}} {
		if err := c.AddTrace(tr); err != nil {
			t.Fatal(err)
		}
	}
	m, err := dtmc.Learn(dtmc.Spec{Predicates: []string{"a", "b"}, Smoothing: dtmc.Smoothing{Mode: dtmc.Frequency}}, c)
	if err != nil {
		t.Fatal(err)
	}
	g := newGuard(t, m, Options{
		Property:  dtmc.Property{Kind: dtmc.Response, Trigger: "not a and not b", Response: "b", Within: 2},
		Threshold: 0.7, Report: ReportCrossing, Unknown: UnknownAlert,
	})
	var r Run
	steps := []struct {
		bits              dtmc.State
		psafe             float64
		violation, report bool
	}{{none, 3.0 / 5, false, true}, {a, 3.0 / 5, false, false}, {a, 0, true, true}}
	for i, st := range steps {
		d := g.Step(&r, uint64(st.bits))
		if math.Abs(d.PSafe-st.psafe) > 1e-12 || d.Violation != st.violation || d.Report != st.report {
			t.Errorf("event %d: %+v", i, d)
		}
	}
	if got := g.Explain(g.Step(&Run{}, uint64(none))); !strings.Contains(got, "waiting for b, 2 events left") {
		t.Errorf("explanation %q", got)
	}
}

func TestOptionsValidate(t *testing.T) {
	err := Options{Threshold: 1.5, Report: "sometimes", Unknown: "ignore"}.Validate()
	for _, want := range []string{"threshold", `report: unknown value "sometimes"`, `unknown_state: unknown value "ignore"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

func BenchmarkStep(b *testing.B) {
	g := stoveGuard(b, 0.7, ReportCrossing, UnknownAlert)
	seq := []uint64{s0, s0, s1, s0, s1, s1}
	var r Run
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		g.Step(&r, seq[i%len(seq)])
	}
}

// Staying in the unsafe state is one violation with crossing, one an event
// with every; leaving and re-entering is a new one.
func TestViolationReportedOnEntry(t *testing.T) {
	seq := []uint64{s3, s3, s1, s3}
	for report, want := range map[Report][]bool{
		ReportCrossing: {true, false, false, true},
		ReportEvery:    {true, true, false, true},
	} {
		g := stoveGuard(t, 0.5, report, UnknownAlert)
		var r Run
		for i, bits := range seq {
			if d := g.Step(&r, bits); d.Report != want[i] {
				t.Errorf("%s: event %d: %+v", report, i, d)
			}
		}
	}
}

// When staying put is the likeliest way to unsafe (s0's self-loop), the
// explanation also names the riskiest change: turning the knob on.
func TestExplanationNamesTheRiskiestChange(t *testing.T) {
	g := stoveGuard(t, 0.97, ReportCrossing, UnknownAlert)
	d := g.Step(&Run{}, s0)
	want := "P(stay safe) = 0.9599 < 0.97 in state not fork_on_burner, not knob_on; most likely way to unsafe: one more event in this state, p = 0.8207; riskiest change: knob_on becomes true, p = 0.1685"
	if got := g.Explain(d); got != want {
		t.Errorf("explanation\n got %q\nwant %q", got, want)
	}
}

// A move out of an absorbing state into a state valid_states excludes is
// skipped: counted, it would make every later learning of the table fail.
func TestLearnerSkipsMovesOutOfTheStateSpace(t *testing.T) {
	l, err := NewLearner(dtmc.Spec{Predicates: []string{"a", "b"}, Rules: dtmc.Rules{Absorbing: "a", ValidStates: "not (a and b)"}})
	if err != nil {
		t.Fatal(err)
	}
	var p Path
	var skipped []string
	for _, bits := range []uint64{0b00, 0b01, 0b11} {
		if why := l.Step(&p, bits); why != "" {
			skipped = append(skipped, why)
		}
	}
	l.End(&p)
	if len(skipped) != 1 || !strings.Contains(skipped[0], "violates valid_states") {
		t.Errorf("skipped %q", skipped)
	}
	if _, err := dtmc.Learn(dtmc.Spec{Predicates: []string{"a", "b"}, Rules: dtmc.Rules{Absorbing: "a", ValidStates: "not (a and b)"}}, l.Counts()); err != nil {
		t.Errorf("the counts no longer learn: %v", err)
	}
}

// Past 12 predicates the state space is the states seen: an unsafe state
// never seen is still a violation with P_safe 0, never NaN.
func TestViolationOutsideTheStateSpace(t *testing.T) {
	var preds []string
	for i := range 13 {
		preds = append(preds, string(rune('a'+i)))
	}
	c := dtmc.NewCounts()
	if err := c.AddTrace([]dtmc.State{0, 0, 0b10}); err != nil {
		t.Fatal(err)
	}
	m, err := dtmc.Learn(dtmc.Spec{Predicates: preds}, c)
	if err != nil {
		t.Fatal(err)
	}
	g := newGuard(t, m, Options{Property: dtmc.Property{Kind: dtmc.AlwaysSafe, Unsafe: "a"}, Threshold: 0.5, Report: ReportCrossing, Unknown: UnknownAlert})
	var r Run
	d := g.Step(&r, 0b01)
	if !d.Violation || d.PSafe != 0 || !d.Below || !d.Report || d.Index != -1 {
		t.Fatalf("%+v", d)
	}
	if d := g.Step(&r, 0); d.PSafe != 1 || d.Report {
		t.Errorf("back in a seen state: %+v", d)
	}
}

// With uncertainty, each decision carries its state's credible interval,
// and on the annotation; deciding on the lower bound warns where the
// estimate is above θ but the interval reaches below it.
func TestIntervalsOnDecisions(t *testing.T) {
	m := stoveModel(t)
	opts := Options{Property: dtmc.Property{Kind: dtmc.AlwaysSafe, Unsafe: stoveUnsafe}, Threshold: 0.95,
		Report: ReportEvery, Unknown: UnknownAlert, Posterior: dtmc.PosteriorOptions{Samples: 300, Seed: 1}}
	mean := newGuard(t, m, opts)
	opts.DecideOn = DecideLowerBound
	lower := newGuard(t, m, opts)
	var r1, r2 Run
	d := mean.Step(&r1, s1) // P_safe 338/349 ≈ 0.968, above 0.95
	if d.Below || !(d.PSafeLow < d.PSafe && d.PSafe < d.PSafeHigh) {
		t.Fatalf("s1 deciding on the mean: %+v", d)
	}
	if d.PSafeLow >= 0.95 {
		t.Fatalf("s1's interval [%.3f, %.3f] does not reach below θ = 0.95: the test needs one that does", d.PSafeLow, d.PSafeHigh)
	}
	dl := lower.Step(&r2, s1)
	if !dl.Below || !dl.Report {
		t.Errorf("s1 deciding on the lower bound %.3f < 0.95: %+v", dl.PSafeLow, dl)
	}
	// The explanation says what was compared with θ: the lower bound.
	if got := lower.Explain(dl); !strings.Contains(got, "lower bound") || !strings.Contains(got, " < 0.95") {
		t.Errorf("explained %q: want the lower bound below θ", got)
	}
	if got := mean.Explain(d); strings.Contains(got, "lower bound") || !strings.Contains(got, " ≥ 0.95") {
		t.Errorf("explained %q on the mean: want the estimate above θ", got)
	}
	span := ptrace.NewSpan()
	mean.Annotate(span, d, "g", 1)
	ev := span.Events().At(0).Attributes()
	low, okLow := ev.Get(verdictattr.PSafeLow)
	high, okHigh := ev.Get(verdictattr.PSafeHigh)
	if !okLow || !okHigh || low.Double() != d.PSafeLow || high.Double() != d.PSafeHigh {
		t.Errorf("annotation %v", ev.AsRaw())
	}
	plain := stoveGuard(t, 0.95, ReportEvery, UnknownAlert)
	var r3 Run
	if d := plain.Step(&r3, s1); !math.IsNaN(d.PSafeLow) {
		t.Errorf("without uncertainty: an interval %v", d.PSafeLow)
	}
	for _, bad := range []Options{
		{Threshold: 0.5, Report: ReportEvery, Unknown: UnknownAlert, DecideOn: DecideLowerBound},
		{Threshold: 0.5, Report: ReportEvery, Unknown: UnknownAlert, DecideOn: "median"},
		{Threshold: 0.5, Report: ReportEvery, Unknown: UnknownAlert, Posterior: dtmc.PosteriorOptions{Samples: 5}},
		{Threshold: 0.5, Report: ReportEvery, Unknown: UnknownAlert, Posterior: dtmc.PosteriorOptions{Samples: 100}, Property: dtmc.Property{Kind: dtmc.Response}},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}
