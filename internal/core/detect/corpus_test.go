// SPDX-License-Identifier: Apache-2.0

package detect

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// corpusDir holds the labelled corpus (testdata/detectors/README.md).
var corpusDir = filepath.Join("..", "..", "..", "testdata", "detectors")

type corpusLine struct {
	Text   string   `json:"text"`
	Label  bool     `json:"label"`
	Kind   string   `json:"kind"`
	Source string   `json:"source"`
	Value  string   `json:"value"`
	Also   []string `json:"also"`
}

func readCorpus(t testing.TB, detector string) []corpusLine {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, detector+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []corpusLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l corpusLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s.jsonl line %d: %v", detector, len(lines)+1, err)
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// score counts a detector's results on labelled lines. A positive counts
// as found only if the detector reports exactly the labelled value; a
// different value is both a false positive and a miss.
type score struct {
	positives, negatives int
	truePos, falsePos    int
	misses, falseAlarms  map[string]int // by kind
}

func newScore() *score {
	return &score{misses: map[string]int{}, falseAlarms: map[string]int{}}
}

func (s *score) add(d Detector, l corpusLine) {
	value, _, found := d.Find(l.Text)
	switch {
	case l.Label && found && value == l.Value:
		s.positives++
		s.truePos++
	case l.Label:
		s.positives++
		s.misses[l.Kind]++
		if found {
			s.falsePos++
			s.falseAlarms[l.Kind+" (wrong value)"]++
		}
	default:
		s.negatives++
		if found {
			s.falsePos++
			s.falseAlarms[l.Kind]++
		}
	}
}

func (s *score) precision() float64 {
	if s.truePos+s.falsePos == 0 {
		return 1
	}
	return float64(s.truePos) / float64(s.truePos+s.falsePos)
}

func (s *score) recall() float64 {
	if s.positives == 0 {
		return 1
	}
	return float64(s.truePos) / float64(s.positives)
}

// floor is the precision and recall a detector must keep on the corpus;
// docs/detectors.md says what the misses and false positives are.
type floor struct{ precision, recall float64 }

var defaultFloor = floor{0.95, 0.95}

// floors lowers the default where the corpus holds hard negatives that no
// context-free detector can tell apart, kept in the corpus on purpose.
var floors = map[string]floor{
	// A Message-ID (<id@mail.example.com>), a Kerberos principal
	// (HTTP/host@EXAMPLE.COM) and an ssh login target (ssh user@host) are
	// spelt exactly like addresses: 12 of the 221 negatives. Telling them
	// apart needs the field or command around them, which this detector
	// does not read.
	"email": {0.93, 0.95},
}

func floorOf(name string) floor {
	if f, ok := floors[name]; ok {
		return f
	}
	return defaultFloor
}

// Each detector's precision and recall on its file of the corpus, and
// "any" on every file's positives against every negative that holds no
// other detector's value on purpose. go test -v prints the table and
// what was missed or wrongly found.
func TestCorpusPrecisionRecall(t *testing.T) {
	scores := map[string]*score{}
	anyScore := newScore()
	anyDetector, _ := Lookup(Any)
	for _, name := range Names() {
		d, _ := Lookup(name)
		s := newScore()
		for _, l := range readCorpus(t, name) {
			s.add(d, l)
			if l.Label || len(l.Also) == 0 {
				anyScore.add(anyDetector, l)
			}
		}
		scores[name] = s
	}
	scores[Any] = anyScore
	t.Log("\n" + scoreTable(scores))
	for _, name := range append(Names(), Any) {
		s, f := scores[name], floorOf(name)
		if s.precision() < f.precision || s.recall() < f.recall {
			t.Errorf("%s: precision %.3f, recall %.3f; want at least %.2f and %.2f", name, s.precision(), s.recall(), f.precision, f.recall)
		}
	}
}

// scoreTable is the Markdown table docs/detectors.md quotes, followed by
// the kinds of cases missed and wrongly found.
func scoreTable(scores map[string]*score) string {
	var b strings.Builder
	b.WriteString("| detector | positives | hard negatives | found | missed | false positives | precision | recall |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	names := append(Names(), Any)
	for _, name := range names {
		s := scores[name]
		fmt.Fprintf(&b, "| `%s` | %d | %d | %d | %d | %d | %.3f | %.3f |\n", name, s.positives, s.negatives,
			s.truePos, s.positives-s.truePos, s.falsePos, s.precision(), s.recall())
	}
	for _, name := range names {
		s := scores[name]
		for _, kind := range slices.Sorted(maps.Keys(s.misses)) {
			fmt.Fprintf(&b, "%s missed: %s ×%d\n", name, kind, s.misses[kind])
		}
		for _, kind := range slices.Sorted(maps.Keys(s.falseAlarms)) {
			fmt.Fprintf(&b, "%s false positive: %s ×%d\n", name, kind, s.falseAlarms[kind])
		}
	}
	return b.String()
}
