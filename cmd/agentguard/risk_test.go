// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/internal/core/dtmc"
)

// The V2 model (the configuration's model:) state by state, riskiest first:
// 11 unsafe, 10 never seen, 00 below θ = 0.965 at 335/349, 01 above it.
func TestRiskOfTheV2Model(t *testing.T) {
	code, out, errs := runCmd("risk", "--config", stoveConfig)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	header := "probguard/stove: property always_safe (unsafe = fork_on_burner and knob_on), threshold 0.965; model " + stoveModel + ", 30 traces learned"
	if lines[0] != header || len(lines) != 13 {
		t.Fatalf("got\n%s\nwant the header %q, a blank line, the column names, 5 states and the unsettled ones", out, header)
	}
	// The intervals are the posterior's (seeded draws): 00's and 01's hold
	// θ = 0.965, so the data do not yet settle either decision.
	for i, want := range []string{
		`^STATE +VISITS +P_SAFE +INTERVAL +FLAG +PREDICATES +MOST LIKELY WAY TO UNSAFE$`,
		`^11 +0 +0\.0000 +0\.000-0\.000 +UNSAFE +fork_on_burner, knob_on +one more event in this state, p = 0\.25$`,
		`^10 +0 +0\.6533 +0\.\d{3}-0\.\d{3} +UNSEEN +fork_on_burner, not knob_on +knob_on becomes true, p = 0\.25$`,
		`^00 +180 +0\.9599 +0\.\d{3}-0\.\d{3} +RISK +not fork_on_burner, not knob_on +one more event in this state, p = 0\.8207$`,
		`^01 +30 +0\.9685 +0\.\d{3}-0\.\d{3} +knob_on, not fork_on_burner +fork_on_burner becomes true, p = 0\.02941$`,
		`^end +30 +1\.0000 +1\.000-1\.000 +end$`,
		`^$`,
		`^States whose credible interval holds the threshold 0\.965 \(the data do not yet say which side they are on\):$`,
		`^  10 \(0 visits\): never visited: its interval is the prior's alone$`,
		`^  00 \(180 visits\): about \d+ more visits would settle this decision$`,
		`^  01 \(30 visits\): about \d+ more visits would settle this decision$`,
	} {
		if !regexp.MustCompile(want).MatchString(lines[i+2]) {
			t.Errorf("line %d: %q does not match %s", i+3, lines[i+2], want)
		}
	}
	// The columns are aligned: every row's P_SAFE starts where its title does.
	col := strings.Index(lines[2], "P_SAFE")
	for _, l := range lines[3:8] {
		if !strings.HasPrefix(l[col:], "0.") && !strings.HasPrefix(l[col:], "1.") {
			t.Errorf("P_SAFE not at column %d in %q", col, l)
		}
	}
}

func TestRiskJSON(t *testing.T) {
	code, out, errs := runCmd("risk", "--config", stoveConfig, "--model", stoveModel, "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	var r riskReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var order []string
	for _, s := range r.States {
		order = append(order, s.State+":"+s.Flag)
	}
	if got := strings.Join(order, " "); got != "11:UNSAFE 10:UNSEEN 00:RISK 01: end:" {
		t.Errorf("states by P_safe: %s", got)
	}
	s00 := r.States[2]
	if math.Abs(s00.PSafe-335.0/349) > 1e-12 || s00.Visits != 180 || !s00.Seen || len(s00.Holding) != 0 ||
		s00.Evidence == nil || s00.Evidence.To != "00" || math.Abs(s00.Evidence.P-151.0/184) > 1e-12 {
		t.Errorf("state 00: %+v, evidence %+v", s00, s00.Evidence)
	}
	if r.Threshold != 0.965 || r.Traces != 30 || r.States[4].Evidence != nil {
		t.Errorf("report %+v", r)
	}
}

func TestRiskBadInput(t *testing.T) {
	dir := t.TempDir()
	other, err := dtmc.Learn(dtmc.Spec{Predicates: []string{"fork_on_burner", "knob_on"}}, dtmc.NewCounts())
	if err != nil {
		t.Fatal(err)
	}
	noRules := filepath.Join(dir, "no-rules.json")
	if err := other.WriteFile(noRules); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--config is required"},
		{[]string{"--config", stoveConfig, "--model", noRules}, "model " + noRules + ": learned under valid_transitions"},
		{[]string{"--config", stoveConfig, "--model", filepath.Join(dir, "none.json")}, "none.json: no such file"},
		{[]string{"--config", stoveConfig, "extra.json"}, "risk reads no trace files"},
	} {
		code, _, errs := runCmd(append([]string{"risk"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}
