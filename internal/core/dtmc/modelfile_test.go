// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestModelFileRoundTrip(t *testing.T) {
	m := learnStove(t)
	var buf bytes.Buffer
	if err := m.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadModel(bytes.NewReader(buf.Bytes()), "stove.json")
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if !back.Counts().Equal(m.Counts()) || strings.Join(back.StateNames(), " ") != "00 01 10 11 end" {
		t.Fatalf("counts or states differ: %v", back.StateNames())
	}
	for s := range 5 {
		for u := range 5 {
			if back.Chain().Prob(s, u) != m.Chain().Prob(s, u) {
				t.Errorf("P(%d|%d) differs", u, s)
			}
		}
	}
	if back.Spec().Unsafe != m.Spec().Unsafe || back.Spec().Rules.MaxChanges != 1 || back.InitialState() != 0 {
		t.Errorf("spec %+v", back.Spec())
	}
}

// The checked-in stove model is the one learning writes (regenerate with
// AGENTGUARD_WRITE_TESTDATA=1 go test -run TestStoveTestdata).
func TestStoveTestdata(t *testing.T) {
	var buf bytes.Buffer
	if err := learnStove(t).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	const path = "../../../testdata/dtmc/stove.json"
	if os.Getenv("AGENTGUARD_WRITE_TESTDATA") == "1" {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, buf.Bytes()) {
		t.Errorf("%s differs from the learned stove model", path)
	}
}

func TestModelFileRejections(t *testing.T) {
	var buf bytes.Buffer
	if err := learnStove(t).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	for _, tc := range []struct {
		old, new, want string
	}{
		{`"version": 1`, `"version": 2`, "stove.json: version 2: this agentguard reads model files of version 1"},
		{`"version": 1,`, ``, "version missing"},
		{`"from": "00",
      "to": "00",
      "n": 150`, `"from": "00",
      "to": "00",
      "n": -150`, "counts[0].n -150: want a non-negative integer"},
		{`"from": "00",
      "to": "01",
      "n": 30`, `"from": "00",
      "to": "0x",
      "n": 30`, `counts[1].to: unknown state "0x"`},
		{`"p": 0.8206521739130435`, `"p": 0.5`, "P(00 | 00) = 0.5, but the counts give 0.8206521739130435"},
		{`"p": 0.8206521739130435`, `"p": "NaN"`, "invalid number literal"},
		{`"p": 0.8206521739130435`, `"p": -0.1`, "transitions[0].p -0.1: want a probability in [0, 1]"},
		{`"max_changes": 1`, `"max_changes": 1, "maxchanges": 2`, `unknown field "maxchanges"`},
		{`"traces": 30`, `"traces": 31`, "traces 31: the starts add up to 30"},
		{`"mode": "laplace"`, `"mode": "lapalce"`, `smoothing.mode "lapalce"`},
	} {
		bad := strings.Replace(good, tc.old, tc.new, 1)
		if bad == good {
			t.Fatalf("%q not in the file:\n%s", tc.old, good)
		}
		_, err := ReadModel(strings.NewReader(bad), "stove.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("replacing %q: err = %v, want %q", tc.old, err, tc.want)
		}
	}
}

// A listed row that does not sum to 1 is rejected even when each entry is
// within tolerance of the learned one... which cannot happen for a row of
// one entry, so the test drops an entry.
func TestModelFileRejectsRowsNotSummingToOne(t *testing.T) {
	var buf bytes.Buffer
	if err := learnStove(t).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	entry := `
    {
      "from": "00",
      "to": "end",
      "p": 0.005434782608695652
    },`
	bad := strings.Replace(good, entry, "", 1)
	if bad == good {
		t.Fatalf("entry not found in\n%s", good)
	}
	_, err := ReadModel(strings.NewReader(bad), "stove.json")
	if err == nil || !strings.Contains(err.Error(), "transitions from 00 sum to 0.99456") {
		t.Errorf("err = %v", err)
	}
}

// A write that cannot be renamed into place (here: the path is a directory)
// fails, leaves what was there, and no temporary file behind.
func TestWriteFileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/model.json"
	m := learnStove(t)
	if err := m.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("a new model file's mode: %v %v", fi.Mode(), err)
	}
	before, _ := os.ReadFile(path)
	blocked := dir + "/blocked"
	if err := os.MkdirAll(blocked+"/inside", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile(blocked); err == nil {
		t.Fatal("renaming over a non-empty directory succeeded")
	}
	after, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	if !bytes.Equal(before, after) || len(entries) != 2 {
		t.Errorf("after a failed write: %d entries %v", len(entries), entries)
	}
}

// FuzzReadModel: any input is rejected with an error or read into a model
// that writes back to a file read as the same model.
func FuzzReadModel(f *testing.F) {
	var buf bytes.Buffer
	if err := learnStove(f).WriteJSON(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"version": 1, "predicates": ["a"], "states": ["0", "1", "end"], "traces": 1, "starts": [{"state": "0", "n": 1}], "counts": [{"from": "0", "to": "end", "n": 1}]}`))
	f.Add([]byte(`{"version": 2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadModel(bytes.NewReader(data), "fuzz.json")
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := m.WriteJSON(&out); err != nil {
			t.Fatalf("read but not written: %v", err)
		}
		back, err := ReadModel(bytes.NewReader(out.Bytes()), "again.json")
		if err != nil {
			t.Fatalf("written but not read back: %v\n%s", err, out.String())
		}
		if !back.Counts().Equal(m.Counts()) || len(back.States()) != len(m.States()) {
			t.Fatal("the round trip changed the model")
		}
	})
}
