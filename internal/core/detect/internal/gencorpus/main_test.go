// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// corpusDir is testdata/detectors from this package's directory.
var corpusDir = filepath.Join("..", "..", "..", "..", "..", "testdata", "detectors")

// The committed corpus is the generator's output, byte for byte, and
// holds no file the generator does not write.
func TestCommittedCorpusIsTheGeneratorsOutput(t *testing.T) {
	want := files()
	for name, data := range want {
		got, err := os.ReadFile(filepath.Join(corpusDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s differs from the generator's output: run go run ./internal/core/detect/internal/gencorpus -out testdata/detectors", name)
		}
	}
	committed, err := filepath.Glob(filepath.Join(corpusDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range committed {
		if _, ok := want[filepath.Base(path)]; !ok {
			t.Errorf("%s is not written by the generator", path)
		}
	}
}

// Two runs give the same bytes: nothing depends on map order or time.
func TestGeneratorIsDeterministic(t *testing.T) {
	first, second := files(), files()
	for name := range first {
		if !bytes.Equal(first[name], second[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}
}

// Each family has at least 200 positives and 200 negatives, every
// positive's value appears in its text, and every line says its source.
func TestCorpusShape(t *testing.T) {
	for _, f := range families {
		c := &corpus{r: newRNG(f.detector)}
		f.generate(c)
		var positives, negatives int
		for _, l := range c.lines {
			if l.Label {
				positives++
				if l.Value == "" || !strings.Contains(l.Text, l.Value) {
					t.Errorf("%s: positive %q: value %q not in the text", f.detector, l.Kind, l.Value)
				}
			} else {
				negatives++
				if l.Value != "" {
					t.Errorf("%s: negative %q has a value", f.detector, l.Kind)
				}
			}
			if l.Kind == "" || l.Source == "" {
				t.Errorf("%s: line without kind or source: %q", f.detector, l.Text)
			}
			for _, other := range l.Also {
				if !slices.ContainsFunc(families, func(g family) bool { return g.detector == other }) {
					t.Errorf("%s: %q names an unknown detector %q in also", f.detector, l.Kind, other)
				}
			}
		}
		if positives < 200 || negatives < 200 {
			t.Errorf("%s: %d positives and %d negatives, want 200 of each at least", f.detector, positives, negatives)
		}
	}
}
