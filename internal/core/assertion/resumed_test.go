// SPDX-License-Identifier: Apache-2.0

package assertion

import (
	"slices"
	"testing"

	"github.com/agentguard/agentguard/internal/core/texpr"
)

// A group taken up after its end does not report again what its end
// decided (on_end: fail), at a step or at its next end, through a save and
// a restore too; an evaluation started after the end, and one an
// inconclusive end left open, are reported.
func TestAResumedGroupDoesNotReportItsEndAgain(t *testing.T) {
	ev := func(bits uint64, i int) Event { return Event{Bits: bits, Time: int64(i) * 1e9, Name: "ev"} }
	const a, b, c = 1, 2, 4
	for _, tc := range []struct {
		onEnd       string
		atEnd, then []string
	}{
		// The end failed te (started at 1); c fails it again at 2, and a at
		// 3 starts one the next end fails.
		{"fail", []string{"te failure 1-1"}, []string{"te failure 3-3"}},
		// The end left it pending; what c decides at 2 is news.
		{"inconclusive", []string{"te pending 1-1"}, []string{"te failure 1-2", "te pending 3-3"}},
	} {
		compiled, err := Compile([]Config{{Name: "te", Always: "a >> b", OnEnd: tc.onEnd}}, []string{"a", "b", "c"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		r := NewRunner(compiled, Options{})
		g := r.NewGroup()
		r.Step("k", g, []Event{ev(a, 0)})
		kept := r.AppendGroup(nil, g) // saved before the end, as retention keeps it
		if got := verdictTexts(r.End("k", g)); !slices.Equal(got, tc.atEnd) {
			t.Fatalf("on_end %s: the end reported %q, want %q", tc.onEnd, got, tc.atEnd)
		}
		for _, through := range []string{"memory", "a save"} {
			g, err := r.RestoreGroup(kept)
			if err != nil {
				t.Fatal(err)
			}
			r.Resumed(g)
			got := verdictTexts(r.Step("k", g, []Event{ev(c, 1)}))
			if through == "a save" {
				if g, err = r.RestoreGroup(r.AppendGroup(nil, g)); err != nil {
					t.Fatal(err)
				}
			}
			got = append(got, verdictTexts(append(r.Step("k", g, []Event{ev(a, 2)}), r.End("k", g)...))...)
			if !slices.Equal(got, tc.then) {
				t.Errorf("on_end %s, through %s: taken up, it reported %q, want %q", tc.onEnd, through, got, tc.then)
			}
		}
	}
}

// A saved form's end mark must be within its events.
func TestRestoreGroupRefusesAnEndBeyondItsEvents(t *testing.T) {
	r := checkpointRunner(t)
	g := r.NewGroup()
	r.Step("k", g, []Event{{Bits: 1, Name: "a"}})
	saved := r.AppendGroup(nil, g)
	for _, mark := range []byte{0, 2} {
		if _, err := r.RestoreGroup(append(slices.Clone(saved), mark)); err == nil {
			t.Errorf("an end mark of %d over 1 event restored", mark)
		}
	}
}

// An Error (more live evaluations than max_threads, abandoned) after a
// group is taken up is reported, although its start is an evaluation the
// end decided: it covers those begun after the end too.
func TestAResumedGroupReportsItsThreadCap(t *testing.T) {
	compiled, err := Compile([]Config{{Name: "te", Always: "ok * (1,1000) + a", OnEnd: "fail"}}, []string{"a"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(compiled, Options{})
	g := r.NewGroup()
	r.Step("k", g, []Event{{Name: "ev"}, {Name: "ev"}})
	kept := r.AppendGroup(nil, g)
	if vs := r.End("k", g); len(vs) == 0 {
		t.Fatal("the end decided nothing")
	}
	g, err = r.RestoreGroup(kept)
	if err != nil {
		t.Fatal(err)
	}
	r.Resumed(g)
	var first *Verdict
	for range 3 {
		for _, v := range r.Step("k", g, []Event{{Name: "ev"}}) {
			if v.Kind == texpr.Error && first == nil {
				first = &v
			}
		}
	}
	// The first cap abandons evaluations begun at 1 (the end failed it) to 3.
	if first == nil || first.Start != 1 {
		t.Errorf("the thread cap's first error after the group was taken up: %+v, want one from event 1", first)
	}
}
