// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
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
	m := regexp.MustCompile(`predicting the base rate: (0\.\d+)\):\n(?:  \+ .*\n)*  \+ .* (0\.\d+) over \d+ predictions\n`).FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("no selection in the report:\n%s", report)
	}
	base, final := atof(t, m[1]), atof(t, m[2])
	if final >= base {
		t.Errorf("the chosen abstraction scores %.4f, no better than the base rate's %.4f:\n%s", final, base, report)
	}
	areas := regexp.MustCompile(`area (0\.\d+)`).FindAllStringSubmatch(report, -1)
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
