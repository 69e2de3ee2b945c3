// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPACReportOfTheStove(t *testing.T) {
	code, out, errs := runCmd("pac", "--model", dtmcData+"stove.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"PAC report: epsilon 0.1, delta 0.05 over 5 states (delta/|S| = 0.01 per state)",
		"B^ = 1/2 * 4 * 6.84814 = 13.7",
		"00           180      189.562          43028          42848  no",
		"10             0      264.916          60131          60131  no",
		"not certified: 4 of 4 learned states need more visits",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestPACFlags(t *testing.T) {
	code, out, _ := runCmd("pac", "--model", dtmcData+"stove.json", "--epsilon", "0.2", "--delta", "0.1", "--unsafe", "knob_on")
	if code != 0 || !strings.Contains(out, "epsilon 0.2, delta 0.1") || !strings.Contains(out, "unsafe = knob_on") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestPACBadInput(t *testing.T) {
	dir := t.TempDir()
	v2 := filepath.Join(dir, "v2.json")
	data, err := os.ReadFile(dtmcData + "stove.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(v2, []byte(strings.Replace(string(data), `"version": 1`, `"version": 2`, 1)), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--model is required"},
		{[]string{"--model", v2}, "v2.json: version 2: this agentguard reads model files of version 1"},
		{[]string{"--model", dtmcData + "stove.json", "--epsilon", "0"}, "epsilon 0, delta 0.05: both must be in (0, 1)"},
		{[]string{"--model", dtmcData + "stove.json", "--unsafe", "knob"}, `--unsafe: unsafe: col 1: unknown predicate "knob"`},
		{[]string{"--model", dtmcData + "stove.tra"}, "stove.tra"},
	} {
		code, _, errs := runCmd(append([]string{"pac"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}
