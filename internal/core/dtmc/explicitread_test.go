// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A .tra file may list its lines in any order, with blank lines and extra
// blanks: the chain read is the same, and the lines named in errors count
// the blank lines.
func TestReadTraAnyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 30 {
		c := randomRatChain(r, 2+r.IntN(30)).chain(t)
		var buf bytes.Buffer
		if err := WriteTra(&buf, c); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		body := lines[1:]
		r.Shuffle(len(body), func(i, j int) { body[i], body[j] = body[j], body[i] })
		var mixed strings.Builder
		mixed.WriteString(lines[0] + "\n")
		for _, l := range body {
			if r.IntN(4) == 0 {
				mixed.WriteString("\n \t\n")
			}
			mixed.WriteString(" " + strings.ReplaceAll(l, " ", " \t ") + "\r\n")
		}
		back, _, err := ReadTra(strings.NewReader(mixed.String()), "mixed.tra")
		if err != nil {
			t.Fatal(err)
		}
		sameChain(t, back, c)
	}
	// A deadlock amid states out of order gets its self-loop in its place.
	c, warnings, err := ReadTra(strings.NewReader("4 3\n3 3 1\n\n0 3 1\n2 0 1\n"), "d.tra")
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "d.tra: state 1 has no transitions") {
		t.Fatalf("%v %v", warnings, err)
	}
	if !c.Absorbing(1) || c.Prob(2, 0) != 1 || c.Prob(0, 3) != 1 || !c.Absorbing(3) || c.NumTransitions() != 4 {
		t.Errorf("rows %v", c.rowStart)
	}
}

func sameChain(t *testing.T, got, want *Chain) {
	t.Helper()
	if got.NumStates() != want.NumStates() {
		t.Fatalf("%d states, want %d", got.NumStates(), want.NumStates())
	}
	for s := range want.NumStates() {
		wc, wp := want.Row(s)
		gc, gp := got.Row(s)
		if fmt.Sprint(gc, gp) != fmt.Sprint(wc, wp) {
			t.Fatalf("state %d: %v %v, want %v %v", s, gc, gp, wc, wp)
		}
	}
}

// A line longer than the reader's buffer is read whole.
func TestReadLabLongLine(t *testing.T) {
	var b strings.Builder
	long := strings.Repeat("x", 100)
	for i := range 3000 {
		fmt.Fprintf(&b, "%d=\"%s%d\" ", i, long, i)
	}
	b.WriteString("\n1: 2999 0\n")
	labels, err := ReadLab(strings.NewReader(b.String()), "long.lab", 2)
	if err != nil || len(labels) != 3000 || !labels[2999].States[1] || !labels[0].States[1] || labels[0].States[0] {
		t.Fatalf("%d labels, %v", len(labels), err)
	}
}

// writeBenchTra writes the benchmark's random chain of n states to a file.
func writeBenchTra(b *testing.B, n int) string {
	c, _ := randomSparseChain(rand.New(rand.NewPCG(42, uint64(n))), n, 8, 0.05)
	path := filepath.Join(b.TempDir(), "bench.tra")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := WriteTra(f, c); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkReadTra: reading and building a chain of out-degree 8 from its
// .tra file, beside the floor of any line-based reader, counting the lines
// of the same file with bufio.Scanner.
func BenchmarkReadTra(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		if n >= 1_000_000 && testing.Short() {
			continue
		}
		path := writeBenchTra(b, n)
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("n=%d/read=ReadTra", n), func(b *testing.B) {
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			for b.Loop() {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				c, _, err := ReadTra(f, path)
				f.Close()
				if err != nil || c.NumStates() != n+2 {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("n=%d/read=countLines", n), func(b *testing.B) {
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			for b.Loop() {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				if lines := countLines(f); lines < 7*n {
					b.Fatalf("%d lines", lines)
				}
				f.Close()
			}
		})
	}
}

func countLines(r io.Reader) int {
	sc := bufio.NewScanner(r)
	lines := 0
	for sc.Scan() {
		lines++
	}
	return lines
}
