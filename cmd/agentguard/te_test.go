// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"strings"
	"testing"
)

func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = dispatch(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestTEVerdictLines(t *testing.T) {
	code, out, _ := runCmd("te", "--expr", "preda + preda | preda + ok + preda", "--signal", "preda=01110100")
	want := "FAILURE 1/1\nMATCH 2/3\nMATCH 2/4\nMATCH 3/4\nFAILURE 5/5\nMATCH 4/6\nFAILURE 7/7\nFAILURE 6/8\nFAILURE 8/8\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, output\n%s\nwant\n%s", code, out, want)
	}
}

func TestTETracePrintsThePaperTrees(t *testing.T) {
	code, out, _ := runCmd("te", "--expr", "preda + preda | preda + ok + preda", "--signal", "preda=01110100", "--trace")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, block := range []string{
		"MATCH\n| (4/6) (40/60) 0 {}\n  + (4/6) (40/60) 0 {}\n    + (4/5) (40/50) 0 {}\n      preda (4/4) (40/40) 0 {}\n      __ok (5/5) (50/50) 0 {}\n    preda (6/6) (60/60) 0 {}\n",
		"FAILURE\n| (6/8) (60/80) 0 {}\n  + (6/7) (60/70) 0 {}\n    preda (6/6) (60/60) 1 {}\n    preda (7/7) (70/70) 0 {}\n  + (6/8) (60/80) 0 {}\n    + (6/7) (60/70) 1 {}\n    preda (8/8) (80/80) 0 {}\n",
	} {
		if !strings.Contains(out, block) {
			t.Errorf("output lacks\n%s\ngot\n%s", block, out)
		}
	}
}

func TestTEPendingNeverAndPolicies(t *testing.T) {
	args := []string{"te", "--expr", "x >> r", "--signal", "x=0101", "--signal", "r=0010"}
	if _, out, _ := runCmd(args...); out != "MATCH 1/1\nMATCH 2/3\nMATCH 3/3\nPENDING 4\n" {
		t.Errorf("default: %q", out)
	}
	if _, out, _ := runCmd(append(args, "--on-end", "fail")...); !strings.HasSuffix(out, "FAILURE 4/4\n") {
		t.Errorf("--on-end fail: %q", out)
	}
	if _, out, _ := runCmd(append(args, "--on-end", "ignore")...); strings.Contains(out, "4") {
		t.Errorf("--on-end ignore: %q", out)
	}
	if _, out, _ := runCmd("te", "--never", "--expr", "x + r", "--signal", "x=0101", "--signal", "r=0010"); out != "FAILURE 1/1\nMATCH 2/3\nFAILURE 3/3\nPENDING 4\n" {
		t.Errorf("--never: %q", out)
	}
}

func TestTEUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"te", "--signal", "a=01"}, "--expr is required"},
		{[]string{"te", "--expr", "a + (a", "--signal", "a=01"}, "col 7: expected ')'"},
		{[]string{"te", "--expr", "a + b", "--signal", "a=01"}, `unknown predicate "b" (declared: a)`},
		{[]string{"te", "--expr", "a", "--signal", "a=0121"}, "bits must be 0s and 1s"},
		{[]string{"te", "--expr", "a", "--signal", "a"}, "want NAME=BITS"},
		{[]string{"te", "--expr", "a", "--signal", "a=1", "--signal", "a=0"}, "declared twice"},
		{[]string{"te", "--expr", "a", "--signal", "a=1", "--on-end", "later"}, `unknown end policy "later"`},
		{[]string{"te", "--expr", "a", "--signal", "a=1", "extra"}, `unexpected argument "extra"`},
		{[]string{"nosuch"}, `unknown command "nosuch"`},
	} {
		code, _, errOut := runCmd(tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
