// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/dtmc/randchain"
)

const dtmcData = "../../testdata/dtmc/"

func TestReachPrintsEveryState(t *testing.T) {
	code, out, errs := runCmd("reach", "--tra", dtmcData+"stove.tra", "--lab", dtmcData+"stove.lab", "--target", "unsafe")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	checkStateLines(t, out, []float64{14.0 / 349, 11.0 / 349, 121.0 / 349, 1, 0})
}

// checkStateLines checks "STATE PROBABILITY" lines to 1e-12, and that each
// probability has at least 12 significant digits.
func checkStateLines(t *testing.T, out string, want []float64) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for s, line := range lines {
		f := strings.Fields(line)
		p, err := strconv.ParseFloat(f[len(f)-1], 64)
		if len(f) != 2 || f[0] != strconv.Itoa(s) || err != nil || math.Abs(p-want[s]) > 1e-12 {
			t.Errorf("line %q, want state %d with %.15g", line, s, want[s])
		}
		if digits := strings.TrimLeft(strings.NewReplacer(".", "", "-", "").Replace(f[1]), "0"); p != 0 && p != 1 && len(digits) < 12 {
			t.Errorf("line %q: fewer than 12 significant digits", line)
		}
	}
}

func TestReachSafeAndBounded(t *testing.T) {
	args := []string{"reach", "--tra", dtmcData + "stove.tra", "--lab", dtmcData + "stove.lab", "--target", "unsafe"}
	if code, out, _ := runCmd(append(args, "--safe")...); code != 0 || !strings.HasPrefix(out, "0 0.959885386819484\n") {
		t.Errorf("--safe: exit %d, %q", code, out)
	}
	// F≤2 from s0 is 79/12512 = 0.00631393861892583.
	if code, out, _ := runCmd(append(args, "--bound", "2")...); code != 0 || !strings.HasPrefix(out, "0 0.00631393861892583\n") {
		t.Errorf("--bound 2: exit %d, %q", code, out)
	}
}

func TestReachBadInput(t *testing.T) {
	dir := t.TempDir()
	badTra := filepath.Join(dir, "bad.tra")
	if err := os.WriteFile(badTra, []byte("2 2\n0 1 1\n1 1 0.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tra", dtmcData + "stove.tra", "--lab", dtmcData + "stove.lab"}, "--tra, --lab and --target are required"},
		{[]string{"--tra", dtmcData + "stove.tra", "--lab", dtmcData + "stove.lab", "--target", "fire"}, `--target "fire": no such label in ../../testdata/dtmc/stove.lab; labels: init, deadlock, unsafe, end`},
		{[]string{"--tra", badTra, "--lab", dtmcData + "stove.lab", "--target", "unsafe"}, "bad.tra:3: state 1: probabilities sum to 0.9"},
		{[]string{"--tra", dtmcData + "missing.tra", "--lab", dtmcData + "stove.lab", "--target", "unsafe"}, "missing.tra"},
		{[]string{"--tra", dtmcData + "stove.tra", "--lab", dtmcData + "stove.lab", "--target", "unsafe", "--tolerance", "1e-20"}, "--tolerance"},
		{[]string{"--nonsense"}, "flag provided but not defined"},
	} {
		code, out, errs := runCmd(append([]string{"reach"}, tc.args...)...)
		if code != 2 || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q, want 2 and %q", tc.args, code, out, errs, tc.want)
		}
	}
}

func TestReachWarnsAboutIrreducibleChains(t *testing.T) {
	dir := t.TempDir()
	tra, lab := filepath.Join(dir, "v4.tra"), filepath.Join(dir, "v4.lab")
	os.WriteFile(tra, []byte("2 4\n0 0 0.5\n0 1 0.5\n1 0 0.5\n1 1 0.5\n"), 0o644)
	os.WriteFile(lab, []byte("0=\"init\" 1=\"u\"\n0: 0\n1: 1\n"), 0o644)
	code, out, errs := runCmd("reach", "--tra", tra, "--lab", lab, "--target", "u")
	if code != 0 || out != "0 1\n1 1\n" || !strings.Contains(errs, "warning: ") || !strings.Contains(errs, "irreducible") {
		t.Errorf("exit %d, out %q, stderr %q", code, out, errs)
	}
}

// The birth-death line of 1 000 states at self-loop 0.999, written as gentra
// writes it (rows summing to exactly 1): P(F target) from state i is
// i/1001, solved by the banded factorization, whose method and certified
// bound are reported on stderr.
func TestReachPersistentLine(t *testing.T) {
	const n = 1000
	move := math.Round((1-0.999)/2*0x1p54) / 0x1p54
	self := strconv.FormatFloat(1-2*move, 'g', -1, 64)
	mv := strconv.FormatFloat(move, 'g', -1, 64)
	var tra strings.Builder
	fmt.Fprintf(&tra, "%d %d\n0 0 1\n", n+2, 3*n+2)
	for s := 1; s <= n; s++ {
		fmt.Fprintf(&tra, "%d %d %s\n%d %d %s\n%d %d %s\n", s, s-1, mv, s, s, self, s, s+1, mv)
	}
	fmt.Fprintf(&tra, "%d %d 1\n", n+1, n+1)
	dir := t.TempDir()
	traPath, labPath := filepath.Join(dir, "line.tra"), filepath.Join(dir, "line.lab")
	os.WriteFile(traPath, []byte(tra.String()), 0o644)
	os.WriteFile(labPath, []byte(fmt.Sprintf("0=\"init\" 1=\"target\"\n1: 0\n%d: 1\n", n+1)), 0o644)
	code, out, errs := runCmd("reach", "--tra", traPath, "--lab", labPath, "--target", "target")
	if code != 0 || !strings.Contains(errs, "method: banded; error bound ") || !strings.Contains(errs, "1000 solved") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	want := make([]float64, n+2)
	for i := range want {
		want[i] = float64(i) / (n + 1)
	}
	checkStateLines(t, out, want)
}

// writeGrid writes randchain.Grid's w×w walk as PRISM explicit files and
// returns their paths and the exact answers, x/(w+1) from column x.
func writeGrid(t *testing.T, w int) (tra, lab string, want []float64) {
	t.Helper()
	var b strings.Builder
	rows := slices.Collect(randchain.Grid(w))
	transitions := 0
	for _, r := range rows {
		transitions += len(r.To)
	}
	fmt.Fprintf(&b, "%d %d\n", len(rows), transitions)
	for s, r := range rows {
		for i, to := range r.To {
			fmt.Fprintf(&b, "%d %d %s\n", s, to, strconv.FormatFloat(r.Prob[i], 'g', -1, 64))
		}
	}
	dir := t.TempDir()
	tra, lab = filepath.Join(dir, "grid.tra"), filepath.Join(dir, "grid.lab")
	os.WriteFile(tra, []byte(b.String()), 0o644)
	os.WriteFile(lab, []byte(fmt.Sprintf("0=\"init\" 1=\"target\"\n1: 0\n%d: 1\n", w*w+1)), 0o644)
	want = make([]float64, w*w+2)
	for s := 1; s <= w*w; s++ {
		want[s] = float64((s-1)%w+1) / float64(w+1)
	}
	want[w*w+1] = 1
	return tra, lab, want
}

// A grid too wide for the band is answered exactly by the sparse
// factorization, which stderr names.
func TestReachGridSparse(t *testing.T) {
	tra, lab, want := writeGrid(t, 160)
	code, out, errs := runCmd("reach", "--tra", tra, "--lab", lab, "--target", "target")
	if code != 0 || !strings.Contains(errs, "method: sparse; error bound ") || !strings.Contains(errs, "25600 solved") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	checkStateLines(t, out, want)
}

// --time-limit stops the solve: every state is still printed, within the
// bound stderr certifies, which is not the requested tolerance, and the exit
// status is 4. A limit of a nanosecond stops the factorization at its first
// progress check.
func TestReachTimeLimit(t *testing.T) {
	tra, lab, want := writeGrid(t, 160)
	code, out, errs := runCmd("reach", "--tra", tra, "--lab", lab, "--target", "target", "--time-limit", "1ns")
	if code != exitTimeLimit || !strings.Contains(errs, "method: none; error bound 0.5;") ||
		!strings.Contains(errs, "time limit reached after 1ns: the answers are certified within 0.5, not the requested 1e-09") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d", len(lines), len(want))
	}
	for s, line := range lines {
		f := strings.Fields(line)
		p, err := strconv.ParseFloat(f[1], 64)
		if err != nil || f[0] != strconv.Itoa(s) || math.Abs(p-want[s]) > 0.5 {
			t.Fatalf("line %q: want state %d within 0.5 of %g", line, s, want[s])
		}
	}
	// A limit the solve meets changes nothing.
	if code, _, errs := runCmd("reach", "--tra", tra, "--lab", lab, "--target", "target", "--time-limit", "10m"); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCmd("reach", "--tra", tra, "--lab", lab, "--target", "target", "--time-limit", "-1s"); code != 2 || !strings.Contains(errs, "--time-limit") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

// The progress lines name the phase and say what is known: the fraction
// done and the time left, the residual, the certified bound.
func TestReachProgressLines(t *testing.T) {
	var b strings.Builder
	print := progressPrinter(&b)
	print(dtmc.Progress{Elapsed: 6 * time.Second, Phase: "sparse LU", Done: 0.25, Left: 18 * time.Second, Bound: math.NaN(), Residual: math.NaN()})
	print(dtmc.Progress{Elapsed: 9 * time.Second, Phase: "interval iteration", Done: math.NaN(), Left: time.Minute, Bound: 0.0123, Residual: math.NaN()})
	print(dtmc.Progress{Elapsed: 12 * time.Second, Phase: "BiCGSTAB", Done: math.NaN(), Bound: math.NaN(), Residual: 3e-12})
	want := "agentguard reach: 6s: sparse LU, 25% done, about 18s left\n" +
		"agentguard reach: 9s: interval iteration, certified within 0.0123, about 1m0s left\n" +
		"agentguard reach: 12s: BiCGSTAB, residual 3e-12\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
