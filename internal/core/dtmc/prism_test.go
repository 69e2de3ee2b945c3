// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

func TestExplicitRoundTrip(t *testing.T) {
	m := learnStove(t)
	var tra, lab bytes.Buffer
	if err := WriteTra(&tra, m.Chain()); err != nil {
		t.Fatal(err)
	}
	if err := WriteLab(&lab, m.Labels(), len(m.States())); err != nil {
		t.Fatal(err)
	}
	wantLab := "0=\"init\" 1=\"deadlock\" 2=\"fork_on_burner\" 3=\"knob_on\" 4=\"end\" 5=\"unsafe\"\n0: 0\n1: 3\n2: 2\n3: 2 3 5\n4: 4\n"
	if lab.String() != wantLab {
		t.Errorf(".lab:\n%s\nwant\n%s", lab.String(), wantLab)
	}
	c, warnings, err := ReadTra(&tra, "stove.tra")
	if err != nil || len(warnings) != 0 {
		t.Fatalf("%v %v", err, warnings)
	}
	for s := range 5 {
		for u := range 5 {
			if c.Prob(s, u) != m.Chain().Prob(s, u) {
				t.Errorf("P(%d|%d) = %v, want %v", u, s, c.Prob(s, u), m.Chain().Prob(s, u))
			}
		}
	}
	labels, err := ReadLab(&lab, "stove.lab", 5)
	if err != nil {
		t.Fatal(err)
	}
	unsafe, ok := FindLabel(labels, "unsafe")
	if !ok || len(labels) != 6 || !unsafe.States[3] || unsafe.States[2] {
		t.Errorf("labels %v", labels)
	}
}

func TestRandomChainsSurviveTheExplicitFormat(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		c := randomRatChain(r, 2+r.IntN(40)).chain(t)
		var buf bytes.Buffer
		if err := WriteTra(&buf, c); err != nil {
			t.Fatal(err)
		}
		back, _, err := ReadTra(&buf, "r.tra")
		if err != nil {
			t.Fatal(err)
		}
		for s := range c.NumStates() {
			cols, probs := c.Row(s)
			bc, bp := back.Row(s)
			if len(cols) != len(bc) {
				t.Fatalf("state %d: %d entries, want %d", s, len(bc), len(cols))
			}
			for i := range cols {
				if cols[i] != bc[i] || probs[i] != bp[i] {
					t.Fatalf("state %d entry %d differs", s, i)
				}
			}
		}
	}
}

func TestStoveExplicitTestdata(t *testing.T) {
	f, err := os.Open("../../../testdata/dtmc/stove.tra")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, _, err := ReadTra(f, "stove.tra")
	if err != nil {
		t.Fatal(err)
	}
	want := stove().chain(t)
	for s := range 5 {
		for u := range 5 {
			if !near(c.Prob(s, u), want.Prob(s, u), 1e-15) {
				t.Errorf("P(%d|%d) = %v, want %v", u, s, c.Prob(s, u), want.Prob(s, u))
			}
		}
	}
}

func TestReadTraRejections(t *testing.T) {
	for _, tc := range []struct {
		src, want string
	}{
		{"", "x.tra: empty file"},
		{"2\n", `x.tra:1: header "2"`},
		{"2 2\n0 1 1\n1 1 0.5\n", "x.tra:3: state 1: probabilities sum to 0.5, want 1 (within 1e-09)"},
		{"2 2\n0 1 1\n1 1 -1\n", `x.tra:3: field 3 (PROB) "-1": want a number in [0, 1]`},
		{"2 2\n0 1 1\n1 1 NaN\n", `x.tra:3: field 3 (PROB) "NaN"`},
		{"2 2\n0 1 1\n1 1 0x1p-1x\n", `x.tra:3: field 3 (PROB) "0x1p-1x"`},
		{"2 2\n0 1 1\n\n\n1 1 +Inf\n", `x.tra:5: field 3 (PROB) "+Inf"`},
		{"2 2\n0 1 1\n1 -1 1\n", `x.tra:3: field 2 (DST) "-1": want a state 0 to 1`},
		{"2 2\n0 1 1\nx 1 1\n", `x.tra:3: field 1 (SRC) "x": want a state 0 to 1`},
		{"2 2\n0 1 1\n99999999999 1 1\n", `x.tra:3: field 1 (SRC) "99999999999"`},
		{"2 2\n0 1 1\n1 1 1 a\n", `x.tra:3: "1 1 1 a": want three fields`},
		{"2 3\n1 1 1\n\n0 1 0.25\n0 0 0.5\n", "x.tra:4: state 0: probabilities sum to 0.75"},
		{"2 2\n0 1 1\n1 2 1\n", `x.tra:3: field 2 (DST) "2": want a state 0 to 1`},
		{"2 3\n0 1 1\n1 1 1\n", "the header announces 3 transitions, the file has 2"},
		{"2 3\n0 1 0.5\n0 1 0.5\n1 1 1\n", "x.tra:2: state 0: transition to 1 given twice"},
		{"2 2 2\n", `x.tra:1: header "2 2 2"`},
		{"0 0\n", `x.tra:1: header "0 0"`},
		{"100000 0\n", "x.tra: the header announces 100000 states for 0 transitions: more than 65536 states without transitions"},
		{"2 2\n0 1 1\n1 1\n", `x.tra:3: "1 1": want three fields "SRC DST PROB"`},
	} {
		_, _, err := ReadTra(strings.NewReader(tc.src), "x.tra")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.src, err, tc.want)
		}
	}
	// A deadlock becomes absorbing, with a warning; so does irreducibility.
	c, warnings, err := ReadTra(strings.NewReader("2 1\n0 1 1\n"), "x.tra")
	if err != nil || !c.Absorbing(1) || len(warnings) != 1 || !strings.Contains(warnings[0], "state 1 has no transitions") {
		t.Errorf("deadlock: %v %v", warnings, err)
	}
	_, warnings, _ = ReadTra(strings.NewReader("2 3\n0 1 1\n1 0 0.5\n1 1 0.5\n"), "x.tra")
	if len(warnings) != 1 || !strings.Contains(warnings[0], "irreducible") {
		t.Errorf("irreducible: %v", warnings)
	}
}

func TestReadLabRejections(t *testing.T) {
	for _, tc := range []struct {
		src, want string
	}{
		{"", "x.lab: empty file"},
		{"0=init\n", `x.lab:1: label declaration "0=init"`},
		{"1=\"init\"\n", "want index 0"},
		{"0=\"a\" 1=\"a\"\n", `label "a" declared twice`},
		{"0=\"init\"\n2: 0\n", `x.lab:2: "2: 0": want "STATE: LABELINDEX …" with a state 0 to 1`},
		{"0=\"init\"\n1: 1\n", `x.lab:2: state 1: field 2: unknown label index "1" (declared 0 to 0)`},
		{"0=\"init\"\n\n1: 0 x\n", `x.lab:3: state 1: field 3: unknown label index "x"`},
		{"0=\"init\" 1=init\n", `x.lab:1: label declaration "1=init" (field 2)`},
	} {
		_, err := ReadLab(strings.NewReader(tc.src), "x.lab", 2)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.src, err, tc.want)
		}
	}
}

func TestWritePRISM(t *testing.T) {
	m := learnStove(t)
	var buf bytes.Buffer
	if err := WritePRISM(&buf, m.Chain(), m.InitialState(), m.Labels(), m.StateNames()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"dtmc\n\nmodule chain\n\ts : [0..4] init 0;\n",
		"\t// 01\n\t[] s=1 -> 0.029411764705882353 : (s'=0) + 0.029411764705882353 : (s'=1) + 0.029411764705882353 : (s'=3) + 0.9117647058823529 : (s'=4);\n",
		"\t[] s=4 -> 1 : (s'=4);\nendmodule\n",
		"label \"unsafe\" = s=3;",
		"label \"fork_on_burner\" = s=2 | s=3;",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("PRISM output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `label "init"`) || strings.Contains(out, `label "deadlock"`) {
		t.Error("PRISM's built-in labels must not be redefined")
	}
}

func FuzzReadTra(f *testing.F) {
	for _, s := range []string{"2 2\n0 1 1\n1 1 1\n", "3 4\n0 1 0.5\n0 2 0.5\n1 1 1\n2 2 1\n", "1 0\n", "2 1\n0 0 1e-300\n", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		c, _, err := ReadTra(strings.NewReader(src), "fuzz.tra")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.tra") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := WriteTra(&buf, c); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadTra(&buf, "again.tra"); err != nil {
			t.Fatalf("a written chain does not read back: %v", err)
		}
	})
}

func FuzzReadLab(f *testing.F) {
	for _, s := range []string{"0=\"init\" 1=\"deadlock\"\n0: 0\n1: 1 0\n", "0=\"a\"\n", "0=\"x\"\n3: 0\n", "0=\"\\u00e9\"\n0:\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		labels, err := ReadLab(strings.NewReader(src), "fuzz.lab", 3)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.lab") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := WriteLab(&buf, labels, 3); err != nil {
			t.Fatal(err)
		}
		back, err := ReadLab(&buf, "again.lab", 3)
		if err != nil || len(back) != len(labels) {
			t.Fatalf("written labels do not read back: %v\n%s", err, buf.String())
		}
		for i := range labels {
			if back[i].Name != labels[i].Name {
				t.Fatalf("label %d: %q, want %q", i, back[i].Name, labels[i].Name)
			}
			for s := range 3 {
				if back[i].States[s] != labels[i].States[s] {
					t.Fatalf("label %q state %d differs", labels[i].Name, s)
				}
			}
		}
	})
}
