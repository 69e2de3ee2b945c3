// SPDX-License-Identifier: Apache-2.0

// Command gentra writes the benchmark chains of the dtmc package as PRISM
// explicit files (NAME.tra and NAME.lab, labels "init" and "target"), so that
// `agentguard reach` and PRISM can be run on the same models:
//
//	go run ./internal/core/dtmc/gentra -family random -n 1000000 -absorb 0.05 -o /tmp/r6
//	go run ./internal/core/dtmc/gentra -family line -n 1000 -stay 0.999 -o /tmp/line
//	go run ./internal/core/dtmc/gentra -family grid -n 300 -o /tmp/grid300
//
// random: n transient states of out-degree 8, as the package's benchmark
// draws them (same generator, same seed), then the target (state n) and a
// sink (n+1). lazy: the same with every transient row halved and a self-loop
// of 1/2 added. line: a birth-death line, states 0 (a sink) to n+1 (the
// target); each inner state stays put with probability stay and moves to
// either neighbour with (1−stay)/2. The move probability is rounded to a
// multiple of 2⁻⁵⁴ so that stay = 1 − 2·move is a float64 and every row sums
// to exactly 1: the answer from state i is then exactly i/(n+1). grid: the
// persistent walk on an n×n grid of randchain.Grid (states 0 the sink, 1..n²
// the cells row by row, n²+1 the target); the answer from a cell in column
// x is exactly x/(n+1), which is (s−1) mod n + 1 for state s.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/agentguard/agentguard/internal/core/dtmc/randchain"
)

func main() {
	family := flag.String("family", "random", "random, lazy, line or grid")
	n := flag.Int("n", 1000, "transient states (random, lazy), inner states (line) or the grid's side (grid)")
	absorb := flag.Float64("absorb", 0.05, "random, lazy: each row's probability of leaving to the target or the sink")
	stay := flag.Float64("stay", 0.999, "line: the self-loop probability")
	out := flag.String("o", "chain", "output prefix: writes PREFIX.tra and PREFIX.lab")
	flag.Parse()
	if err := run(*family, *n, *absorb, *stay, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gentra:", err)
		os.Exit(2)
	}
}

func run(family string, n int, absorb, stay float64, out string) error {
	if n < 1 || n > math.MaxInt32-2 {
		return fmt.Errorf("-n %d: want 1 to %d", n, math.MaxInt32-2)
	}
	var rows iter.Seq[randchain.Row]
	var initial, target int
	switch family {
	case "random", "lazy":
		if !(absorb > 0 && absorb < 1) {
			return fmt.Errorf("-absorb %g: want a number in (0, 1)", absorb)
		}
		rows, initial, target = randomRows(n, absorb, family == "lazy"), 0, n
	case "line":
		if !(stay >= 0 && stay < 1) {
			return fmt.Errorf("-stay %g: want a number in [0, 1)", stay)
		}
		rows, initial, target = lineRows(n, stay), 1, n+1
	case "grid":
		if n > 46_000 {
			return fmt.Errorf("-n %d: a grid's side is at most 46 000", n)
		}
		rows, initial, target = randchain.Grid(n), 1, n*n+1
	default:
		return fmt.Errorf("-family %q: want random, lazy, line or grid", family)
	}
	states, transitions := 0, 0
	for r := range rows {
		states++
		transitions += len(r.To)
	}
	if err := writeFile(out+".tra", func(w *bufio.Writer) {
		fmt.Fprintf(w, "%d %d\n", states, transitions)
		var buf []byte
		s := 0
		for r := range rows {
			for i, t := range r.To {
				buf = strconv.AppendInt(buf[:0], int64(s), 10)
				buf = append(buf, ' ')
				buf = strconv.AppendInt(buf, int64(t), 10)
				buf = append(buf, ' ')
				buf = strconv.AppendFloat(buf, r.Prob[i], 'g', -1, 64)
				buf = append(buf, '\n')
				w.Write(buf)
			}
			s++
		}
	}); err != nil {
		return err
	}
	return writeFile(out+".lab", func(w *bufio.Writer) {
		fmt.Fprintf(w, "0=\"init\" 1=\"target\"\n%d: 0\n%d: 1\n", initial, target)
	})
}

func writeFile(name string, write func(*bufio.Writer)) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	write(w)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// randomRows is the benchmark's chain (the dtmc package's seed: 42, n),
// drawn afresh on every pass, since the file is written in two.
func randomRows(n int, absorb float64, lazy bool) iter.Seq[randchain.Row] {
	return func(yield func(randchain.Row) bool) {
		for r := range randchain.Rows(rand.New(rand.NewPCG(42, uint64(n))), n, 8, absorb, lazy) {
			if !yield(r) {
				return
			}
		}
	}
}

// lineRows is the birth-death line of n inner states with the self-loop stay.
func lineRows(n int, stay float64) iter.Seq[randchain.Row] {
	move := math.Round((1-stay)/2*0x1p54) / 0x1p54
	self := 1 - 2*move // exact: 2·move is a multiple of 2⁻⁵³ below 1
	return func(yield func(randchain.Row) bool) {
		if !yield(randchain.Row{To: []int32{0}, Prob: []float64{1}}) {
			return
		}
		for s := 1; s <= n; s++ {
			if !yield(randchain.Row{To: []int32{int32(s - 1), int32(s), int32(s + 1)}, Prob: []float64{move, self, move}}) {
				return
			}
		}
		yield(randchain.Row{To: []int32{int32(n + 1)}, Prob: []float64{1}})
	}
}
