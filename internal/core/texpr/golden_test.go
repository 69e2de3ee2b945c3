// SPDX-License-Identifier: Apache-2.0

package texpr

import (
	"strings"
	"testing"
)

func tenTimes(cycle int) int64 { return int64(10 * cycle) }

// treesOf runs an always assertion and returns every verdict's heading and
// tree, as `agentguard te --trace` prints them.
func treesOf(t *testing.T, expr string, names []string, evs []Event) []string {
	e, err := Parse(expr, names)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMonitor(Assertion{Expr: e, Trees: TreesAll, Passes: true})
	var out []string
	add := func(vs []Verdict) {
		for _, v := range vs {
			for _, tr := range v.Trees {
				out = append(out, v.Kind.String()+"\n"+tr.Format(tenTimes))
			}
		}
	}
	for _, ev := range evs {
		add(m.Step(ev))
	}
	add(m.Finish())
	return out
}

func contains(blocks []string, want string) bool {
	for _, b := range blocks {
		if b == want {
			return true
		}
	}
	return false
}

func TestPaperGoldenTrees(t *testing.T) {
	names, evs := signalEvents(map[string]string{"preda": "01110100"})
	blocks := treesOf(t, "preda + preda | preda + ok + preda", names, evs)
	for _, want := range []string{`MATCH
| (4/6) (40/60) 0 {}
  + (4/6) (40/60) 0 {}
    + (4/5) (40/50) 0 {}
      preda (4/4) (40/40) 0 {}
      __ok (5/5) (50/50) 0 {}
    preda (6/6) (60/60) 0 {}
`, `FAILURE
| (6/8) (60/80) 0 {}
  + (6/7) (60/70) 0 {}
    preda (6/6) (60/60) 1 {}
    preda (7/7) (70/70) 0 {}
  + (6/8) (60/80) 0 {}
    + (6/7) (60/70) 1 {}
    preda (8/8) (80/80) 0 {}
`} {
		if !contains(blocks, want) {
			t.Errorf("missing block\n%s\nin\n%s", want, strings.Join(blocks, "\n"))
		}
	}
	// All verdicts of the paper example, by start, in the order decided.
	var heads []string
	for _, b := range blocks {
		lines := strings.Split(b, "\n")
		heads = append(heads, lines[0]+" "+strings.Fields(lines[1])[1])
	}
	want := "FAILURE (1/1),MATCH (2/3),MATCH (2/4),MATCH (3/4),FAILURE (5/5),MATCH (4/6),FAILURE (7/7),FAILURE (6/8),FAILURE (8/8)"
	if got := strings.Join(heads, ","); got != want {
		t.Errorf("verdicts\n got  %s\n want %s", got, want)
	}
}

func TestPaperAgentFailure(t *testing.T) {
	names := []string{"isXferToGreeting", "isSayHello", "isXferToWeather"}
	// xferToGreeting, sayHello, then a transfer to greeting again: te1 fails.
	evs := []Event{{Bits: 1, Time: 10}, {Bits: 2, Time: 20}, {Bits: 1, Time: 30}}
	blocks := treesOf(t, "isXferToGreeting >> isSayHello + isXferToWeather", names, evs)
	want := `FAILURE
>> (1/3) (10/30) 0 {}
  isXferToGreeting (1/1) (10/10) 1 {}
  + (2/3) (20/30) 0 {}
    isSayHello (2/2) (20/20) 1 {}
    isXferToWeather (3/3) (30/30) 0 {}
`
	if !contains(blocks, want) {
		t.Errorf("missing\n%s\nin\n%s", want, strings.Join(blocks, "\n"))
	}
}

// The records follow the spec's child rules for the operators the paper's
// examples do not show.
func TestTreeShapes(t *testing.T) {
	names, evs := signalEvents(map[string]string{"a": "110", "b": "011"})
	for _, tc := range []struct{ expr, want string }{
		{"~a", "FAILURE\ninv (1/1) (10/10) 0 {}\n  a (1/1) (10/10) 0 {}\n"},
		{"~b", "MATCH\ninv (1/1) (10/10) 0 {}\n  b (1/1) (10/10) 0 {}\n"},
		{"a * 2", "MATCH\nrepeat (1/2) (10/20) 0 {}\n  a (1/1) (10/10) 0 {}\n  a (2/2) (20/20) 0 {}\n"},
		{"a * 3", "FAILURE\nrepeat (1/3) (10/30) 0 {}\n  a (1/1) (10/10) 0 {}\n  a (2/2) (20/20) 0 {}\n  a (3/3) (30/30) 0 {}\n"},
		{"a / b", "MATCH\n/ (2/2) (20/20) 0 {}\n  a (2/2) (20/20) 0 {}\n  b (2/2) (20/20) 0 {}\n"},
		{"a & b", "FAILURE\n& (1/1) (10/10) 0 {}\n  a (1/1) (10/10) 1 {}\n  b (1/1) (10/10) 0 {}\n"},
		{"a ^ ok + b", "MATCH\n^ (1/2) (10/20) 0 {}\n  a (1/1) (10/10) 0 {}\n  + (1/2) (10/20) 0 {}\n    __ok (1/1) (10/10) 0 {}\n    b (2/2) (20/20) 0 {}\n"},
		{"b >> a", "MATCH\n>> (1/1) (10/10) 0 {}\n  b (1/1) (10/10) 0 {}\n"},
		{"first(a | a)", "MATCH\nfirst (1/1) (10/10) 0 {}\n  | (1/1) (10/10) 0 {}\n    a (1/1) (10/10) 0 {}\n"},
		{"first(ok * (1,3) + b)", "MATCH\nfirst (1/2) (10/20) 0 {}\n  + (1/2) (10/20) 0 {}\n    repeat (1/1) (10/10) 0 {}\n      __ok (1/1) (10/10) 0 {}\n    b (2/2) (20/20) 0 {}\n"},
		{"once(a | a)", "MATCH\nonce (2/2) (20/20) 0 {}\n  | (2/2) (20/20) 0 {}\n    a (2/2) (20/20) 0 {}\n"},
		{"first(b)", "FAILURE\nfirst (1/1) (10/10) 0 {}\n  b (1/1) (10/10) 0 {}\n"},
	} {
		blocks := treesOf(t, tc.expr, names, evs)
		if !contains(blocks, tc.want) {
			t.Errorf("%s: missing\n%s\nin\n%s", tc.expr, tc.want, strings.Join(blocks, "\n"))
		}
	}
}
