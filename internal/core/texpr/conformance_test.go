// SPDX-License-Identifier: Apache-2.0

package texpr

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
)

type conformanceCase struct {
	Name    string            `json:"name"`
	Expr    string            `json:"expr"`
	Signals map[string]string `json:"signals"`
	Match   [][2]int          `json:"match"`
	Failure [][2]int          `json:"failure"`
	Pending []int             `json:"pending"`
}

func loadConformance(t *testing.T) []conformanceCase {
	f, err := os.Open("testdata/te-conformance.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []conformanceCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c conformanceCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("conformance line %d: %v", len(cases)+1, err)
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		t.Fatal("no conformance cases")
	}
	return cases
}

// events lays out named bit signals as events, predicates in sorted name order.
func signalEvents(signals map[string]string) ([]string, []Event) {
	var names []string
	n := 0
	for name, bits := range signals {
		names = append(names, name)
		n = max(n, len(bits))
	}
	slices.Sort(names)
	evs := make([]Event, n)
	for c := range evs {
		evs[c] = Event{Time: int64(10 * (c + 1)), Ref: c + 1}
		for i, name := range names {
			if b := signals[name]; c < len(b) && b[c] == '1' {
				evs[c].Bits |= 1 << uint(i)
			}
		}
	}
	return names, evs
}

// asSet drops multiplicity: the reference data are sets.
func asSet(vs verdicts) verdicts { return slices.Compact(slices.Clone(vs)) }

func TestConformance(t *testing.T) {
	for _, c := range loadConformance(t) {
		t.Run(c.Name, func(t *testing.T) {
			names, evs := signalEvents(c.Signals)
			e, err := Parse(c.Expr, names)
			if err != nil {
				t.Fatal(err)
			}
			var want verdicts
			for _, m := range c.Match {
				want = append(want, fmt.Sprintf("M %d/%d", m[0], m[1]))
			}
			for _, f := range c.Failure {
				want = append(want, fmt.Sprintf("F %d/%d", f[0], f[1]))
			}
			for _, p := range c.Pending {
				want = append(want, fmt.Sprintf("P %d", p))
			}
			slices.Sort(want)
			got := asSet(engineVerdicts(t, e, evs, true))
			if !slices.Equal(got, asSet(want)) {
				t.Errorf("%s\n got  %v\n want %v", c.Expr, got, want)
			}
		})
	}
}
