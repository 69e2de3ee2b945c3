// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExportPRISM(t *testing.T) {
	pm := filepath.Join(t.TempDir(), "stove.pm")
	if code, _, errs := runCmd("export", "--model", dtmcData+"stove.json", "--prism", pm); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(pm)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"dtmc\n", "s : [0..4] init 0;", "[] s=3 -> 0.25 : (s'=1) + 0.25 : (s'=2) + 0.25 : (s'=3) + 0.25 : (s'=4);", `label "unsafe" = s=3;`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("lacks %q:\n%s", want, data)
		}
	}
}

// Export to .tra/.lab, then reach on the export gives the spec's V1 numbers.
func TestExportExplicitThenReach(t *testing.T) {
	dir := t.TempDir()
	tra, lab := filepath.Join(dir, "s.tra"), filepath.Join(dir, "s.lab")
	if code, _, errs := runCmd("export", "--model", dtmcData+"stove.json", "--tra", tra, "--lab", lab); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, out, errs := runCmd("reach", "--tra", tra, "--lab", lab, "--target", "unsafe")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	checkStateLines(t, out, []float64{14.0 / 349, 11.0 / 349, 121.0 / 349, 1, 0})
	if code, out, _ := runCmd("reach", "--tra", tra, "--lab", lab, "--target", "knob_on"); code != 0 || !strings.HasPrefix(out, "0 ") {
		t.Errorf("predicate labels: exit %d, %s", code, out)
	}
}

func TestExportBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--prism", "x.pm"}, "--model is required"},
		{[]string{"--model", dtmcData + "stove.json"}, "want either --prism OUT.pm or --tra OUT.tra --lab OUT.lab"},
		{[]string{"--model", dtmcData + "stove.json", "--tra", filepath.Join(dir, "a.tra")}, "--tra and --lab go together"},
		{[]string{"--model", dtmcData + "stove.json", "--prism", filepath.Join(dir, "a.pm"), "--tra", "b.tra"}, "want either"},
		{[]string{"--model", dtmcData + "stove.json", "--prism", filepath.Join(dir, "no", "such", "dir.pm")}, "no such file or directory"},
	} {
		code, _, errs := runCmd(append([]string{"export"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}
