// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/fixtures"
)

// heldOut writes six held-out runs whose decisions under the V2 model are
// known: P_safe(00) = 0.9599, P_safe(01) = 0.9685, 10 never seen, 11 unsafe.
//
//	u1  00 01 01 01 11   at 1 3 5 7 21 s   below 0.965 at 00, 20 s ahead
//	u2  01 01 01 11      at 1 2 3 4 s      below 0.97 only: 3 events, 3 s
//	u3  01 11            at 1 5 s          below 0.97 only: 1 event, 4 s
//	s1  01 01 00         a false alarm at 0.965 (the 00) and 0.97
//	s2  01 01 01         a false alarm at 0.97 only
//	s3  10 00            an unknown-state alert, then 00: as s1
func heldOut(t *testing.T) string {
	look, on, off := fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "turn_on_stove"}, fixtures.ToolCall{Tool: "turn_off_stove"}
	fork := func(at time.Duration) fixtures.ToolCall {
		return fixtures.ToolCall{Tool: "move_fork", Fork: true, At: at}
	}
	at := func(c fixtures.ToolCall, d time.Duration) fixtures.ToolCall { c.At = d; return c }
	s := time.Second
	return writeTraces(t, filepath.Join(t.TempDir(), "held-out.json"),
		fixtures.StoveTrace(1, "", at(look, s), at(on, 3*s), at(look, 5*s), at(look, 7*s), fork(21*s)),
		fixtures.StoveTrace(2, "", on, look, look, fork(0)),
		fixtures.StoveTrace(3, "", on, fork(5*s)),
		fixtures.StoveTrace(4, "", on, look, off),
		fixtures.StoveTrace(5, "", on, look, look),
		fixtures.StoveTrace(6, "", fixtures.ToolCall{Tool: "look", Fork: true}, fixtures.ToolCall{Tool: "move_fork"}))
}

func TestEvaluateHeldOutRuns(t *testing.T) {
	code, out, errs := runCmd("evaluate", "--config", stoveConfig, "--thresholds", "0.9,0.965,0.97", "--samples", "0", heldOut(t))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	want := "runs: 6 (3 unsafe, 3 safe); probguard/stove, model " + stoveModel + "\n\n" +
		"| θ | unsafe runs warned in time | mean lead (events) | mean lead (s) | false alarms on safe runs | unknown-state alerts |\n" +
		"|---:|---:|---:|---:|---:|---:|\n" +
		"| 0.9 | 0/3 (0.0%) | – | – | 0/3 (0.0%) | 1 (1 run) |\n" +
		"| 0.965 | 1/3 (33.3%) | 4.00 | 20.0 | 2/3 (66.7%) | 1 (1 run) |\n" +
		"| 0.97 | 3/3 (100.0%) | 2.67 | 9.0 | 3/3 (100.0%) | 1 (1 run) |\n" +
		// Decisions change where θ passes P_safe(00) and P_safe(01): three
		// intervals, each warning more unsafe runs, so all on the front.
		"\nPareto front of warned in time against false alarms (θ swept over the 3 intervals where a decision changes):\n\n" +
		"| θ | decides as | unsafe runs warned in time | false alarms on safe runs | lead (events) min/p10/p50/p90/max | lead (s) p10/p50/p90 |\n" +
		"|---:|---:|---:|---:|---:|---:|\n" +
		"| 0.9 | any θ in (0, 0.9599] | 0/3 (0.0%) | 0/3 (0.0%) | – | – |\n" +
		"| 0.96 | any θ in (0.9599, 0.9685] | 1/3 (33.3%) | 2/3 (66.7%) | 4/4/4/4/4 | 20.0/20.0/20.0 |\n" +
		"| 1 | any θ in (0.9685, 1] | 3/3 (100.0%) | 3/3 (100.0%) | 1/1/3/4/4 | 3.0/4.0/20.0 |\n" +
		// 00 is first visited by u1, s1 and s3 (s3's unknown 10 not
		// scored); 01 by u1, u2, u3, s1 and s2. Brier over those 8 pairs:
		// (0.9599² + 2·0.0401² + 3·0.9685² + 2·0.0315²) / 8.
		"\nCalibration of P_safe (each group once a state, at its first visit before any violation; observed: the share that stayed safe):\n\n" +
		"| state | predicates | P_safe | groups | stayed safe | observed |\n" +
		"|---:|---:|---:|---:|---:|---:|\n" +
		"| 00 | (none) | 0.960 | 3 | 2 | 0.667 |\n" +
		"| 01 | knob_on | 0.968 | 5 | 2 | 0.400 |\n" +
		"\nBrier score 0.4676 over 8 predictions (0.2500 predicting the overall share for every one)\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// With the posterior's samples (the default), the calibration gives each
// state's credible interval; with too few groups a state's observed share
// counts in no coverage figure.
func TestEvaluateIntervals(t *testing.T) {
	code, out, errs := runCmd("evaluate", "--config", stoveConfig, "--thresholds", "0.9", heldOut(t))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	for _, want := range []string{
		`(?m)^\| state \| predicates \| P_safe \| interval \| groups \| stayed safe \| observed \|$`,
		`(?m)^\| 00 \| \(none\) \| 0\.960 \| 0\.\d{3}-0\.\d{3} \| 3 \| 2 \| 0\.667 \|$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "falls in the state's credible interval") {
		t.Errorf("a coverage figure from states of 3 and 5 groups:\n%s", out)
	}
}

func TestEvaluateJSONAndText(t *testing.T) {
	file := heldOut(t)
	code, out, errs := runCmd("evaluate", "--config", stoveConfig, "--model", stoveModel, "--thresholds", "0.97", "--format", "json", file)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var ev evaluation
	if err := json.Unmarshal([]byte(out), &ev); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	r := ev.Rows[0]
	if ev.Runs != 6 || ev.Unsafe != 3 || r.Warned != 3 || r.FalseAlarms != 3 || r.UnknownAlerts != 1 ||
		r.MeanLeadEvents == nil || math.Abs(*r.MeanLeadEvents-8.0/3) > 1e-12 || *r.MeanLeadSeconds != 9 {
		t.Errorf("%+v %+v", ev, r)
	}
	_, out, _ = runCmd("evaluate", "--config", stoveConfig, "--thresholds", "0.5", "--format", "text", file)
	lines := strings.Split(out, "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[2], "θ    unsafe runs warned in time  mean lead (events)") ||
		!strings.HasPrefix(lines[3], "0.5  0/3 (0.0%)                  –                   –") {
		t.Errorf("text table:\n%s", out)
	}
}

func TestEvaluateBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"f"}, "--config is required"},
		{[]string{"--config", stoveConfig}, "no trace files given"},
		{[]string{"--config", stoveConfig, "--thresholds", "0.5,1.5", "f"}, `--thresholds: "1.5" is not a probability in (0, 1]`},
		{[]string{"--config", stoveConfig, "--thresholds", "0.5,", "f"}, `--thresholds: "" is not a probability`},
		{[]string{"--config", stoveConfig, "--format", "csv", "f"}, `--format: unknown format "csv"`},
		{[]string{"--config", stoveConfig, "--model", "none.json", "f"}, "none.json: no such file"},
	} {
		code, _, errs := runCmd(append([]string{"evaluate"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// Without a run every row would read 0/0: refused, with the reason.
func TestEvaluateRefusesNoEvents(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.json")
	os.WriteFile(empty, []byte(`{"resourceSpans": []}`), 0o600)
	code, out, errs := runCmd("evaluate", "--config", stoveConfig, empty)
	if code != 2 || out != "" || !strings.Contains(errs, "agentguard evaluate: no events to evaluate: no spans in 1 file") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
}

// The suggestion is the front's point warning the most unsafe runs within
// the target rate of false alarms: 2/3 is within 0.7, 3/3 is not.
func TestEvaluateSuggestsTheta(t *testing.T) {
	file := heldOut(t)
	for _, tc := range []struct {
		target, want string
	}{
		{"0.7", "Suggested θ for false alarms at most 70.0%: 0.96 (any θ in (0.9599, 0.9685]): 1/3 (33.3%) unsafe runs warned in time, 2/3 (66.7%) false alarms, median lead 4 events, 20.0 s\n"},
		{"1", "Suggested θ for false alarms at most 100.0%: 1 (any θ in (0.9685, 1]): 3/3 (100.0%) unsafe runs warned in time, 3/3 (100.0%) false alarms, median lead 3 events, 4.0 s\n"},
		{"0", "Suggested θ for false alarms at most 0.0%: 0.9 (any θ in (0, 0.9599]): 0/3 (0.0%) unsafe runs warned in time, 0/3 (0.0%) false alarms\n"},
	} {
		code, out, errs := runCmd("evaluate", "--config", stoveConfig, "--target-false-alarms", tc.target, file)
		if code != 0 || !strings.HasSuffix(out, "\n\n"+tc.want) {
			t.Errorf("target %s: exit %d %s\n%s\nwant suffix %s", tc.target, code, errs, out, tc.want)
		}
	}
	code, _, errs := runCmd("evaluate", "--config", stoveConfig, "--target-false-alarms", "1.5", file)
	if code != 2 || !strings.Contains(errs, `--target-false-alarms: "1.5" is not a rate in [0, 1]`) {
		t.Errorf("exit %d, %s", code, errs)
	}
}

// The picture is well-formed XML holding the three panels, the front's θ,
// the configured and the suggested θ.
func TestEvaluateSVG(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "eval.svg")
	code, _, errs := runCmd("evaluate", "--config", stoveConfig, "--target-false-alarms", "0.7", "--svg", svg, heldOut(t))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, data)
		}
		if cd, ok := tok.(xml.CharData); ok && strings.TrimSpace(string(cd)) != "" {
			texts = append(texts, string(cd))
		}
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"Warned in time against false alarms", "Lead at θ 0.96: 1 unsafe runs warned",
		"Calibration: Brier 0.468 (base rate 0.250)", "θ 0.96", "θ 1", "○ suggested θ 0.96 (false alarms ≤ 70%)",
		"median 4 events, 20.0 s", "knob_on: P_safe 0.968, 2/5 stayed safe", "1%", "5%", "25%", "above it: pessimistic, which costs false alarms",
		"model stove.json: 6 runs"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the picture's text:\n%s", want, all)
		}
	}
	if strings.Contains(all, "testdata/") {
		t.Errorf("a path in the picture:\n%s", all)
	}
	code, _, errs = runCmd("evaluate", "--config", stoveConfig, "--svg", filepath.Join(t.TempDir(), "no", "such", "dir.svg"), heldOut(t))
	if code != 2 || !strings.Contains(errs, "--svg: open") {
		t.Errorf("exit %d, %s", code, errs)
	}
}

// The sweep decides exactly as the processor's guard replayed at each θ:
// on random runs over the stove model, at every swept θ and at the ends of
// its interval, the same runs are warned in time, with the same leads, and
// the same safe runs are warned.
func TestSweepAgreesWithReplay(t *testing.T) {
	_, cfg, err := readProbguardConfig(stoveConfig, "")
	if err != nil {
		t.Fatal(err)
	}
	_, m, err := servedModel(cfg, stoveModel, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		runs := make([][]sequence.Event, 1+rng.IntN(30))
		for i := range runs {
			runs[i] = make([]sequence.Event, 1+rng.IntN(8))
			for j := range runs[i] {
				runs[i][j] = sequence.Event{Bits: uint64(rng.IntN(4)), Start: pcommon.Timestamp(j * int(time.Second))}
			}
		}
		g, err := newGuard(m, cfg.GuardOptions())
		if err != nil {
			t.Fatal(err)
		}
		points := sweep(scoreRuns(g, runs))
		for _, p := range points {
			for _, theta := range []float64{p.Theta, p.UpTo, math.Nextafter(p.Above, 2)} {
				if theta <= 0 {
					continue
				}
				opts := cfg.GuardOptions()
				opts.Threshold = theta
				row, _, err := evaluateAt(m, opts, runs)
				if err != nil {
					t.Fatal(err)
				}
				var sum float64
				for _, l := range p.leads {
					sum += float64(l.events)
				}
				if row.Warned != p.Warned || row.FalseAlarms != p.FalseAlarms ||
					(row.MeanLeadEvents != nil && math.Abs(*row.MeanLeadEvents-sum/float64(p.Warned)) > 1e-12) {
					t.Fatalf("round %d, θ %v: replay %+v, sweep %+v", round, theta, row, p)
				}
			}
		}
	}
}

// Labels never overlap: crowded points get theirs where there is room, or
// none (and the picture says how many went without).
func TestSVGLabelsNeverOverlap(t *testing.T) {
	var c svgCanvas
	p := panel{svgMargin, 44}
	placed := 0
	for i := range 60 {
		if c.label(p, p.x(0.3+float64(i%7)*0.01), p.y(0.5+float64(i/7)*0.01), "", fmt.Sprintf("θ 0.%03d", i)) {
			placed++
		}
	}
	for i, a := range c.placed {
		for _, b := range c.placed[i+1:] {
			if a.overlaps(b) {
				t.Fatalf("labels %v and %v overlap", a, b)
			}
		}
	}
	if placed == 0 || placed == 60 {
		t.Errorf("%d of 60 crowded labels placed: the test shows nothing", placed)
	}
}
