// SPDX-License-Identifier: Apache-2.0

package assertion

import (
	"fmt"
	"slices"
	"testing"
)

func checkpointRunner(t testing.TB) *Runner {
	compiled, err := Compile([]Config{{Name: "te3", Always: "a >> (b | c)"}, {Name: "n", Never: "c + c"}}, []string{"a", "b", "c"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return NewRunner(compiled, Options{MaxEventsPerGroup: 100})
}

func verdictTexts(vs []Verdict) []string {
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprintf("%s %s %d-%d", v.Assertion.Name, v.VerdictName(), v.Start, v.End))
	}
	return out
}

// A group restored from its saved state goes on exactly as the group it
// was saved from, at every cut of a sequence.
func TestRestoredGroupGoesOnAlike(t *testing.T) {
	r := checkpointRunner(t)
	bits := []uint64{1, 2, 1, 4, 4, 1, 0, 1, 2, 4}
	evs := make([]Event, len(bits))
	for i, b := range bits {
		evs[i] = Event{Bits: b, Time: int64(i) * 1e9, Name: fmt.Sprintf("ev%d", i)}
	}
	for cut := range len(evs) + 1 {
		g := r.NewGroup()
		r.Step("k", g, evs[:cut])
		saved := r.AppendGroup(nil, g)
		restored, err := r.RestoreGroup(saved)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		want := verdictTexts(append(r.Step("k", g, evs[cut:]), r.End("k", g)...))
		got := verdictTexts(append(r.Step("k", restored, evs[cut:]), r.End("k", restored)...))
		if !slices.Equal(got, want) {
			t.Errorf("cut %d: restored %q, original %q", cut, got, want)
		}
	}
}

// RestoreGroup parses what a disk hands back: it never panics, and refuses
// with an error what it cannot read.
func FuzzRestoreGroup(f *testing.F) {
	r := checkpointRunner(f)
	g := r.NewGroup()
	r.Step("k", g, []Event{{Bits: 1, Name: "x"}, {Bits: 4, Time: 5, Name: "y"}})
	f.Add(r.AppendGroup(nil, g))
	f.Add([]byte{200})
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := r.RestoreGroup(data)
		if err != nil {
			return
		}
		if again, err := r.RestoreGroup(r.AppendGroup(nil, g)); err != nil || len(again.events) != len(g.events) {
			t.Fatalf("re-saved group does not restore the same: %v", err)
		}
	})
}
