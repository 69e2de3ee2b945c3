// Command gentra writes the benchmark chains of the dtmc package as PRISM
// explicit files (NAME.tra and NAME.lab, labels "init" and "target"), so that
// `agentguard reach` and PRISM can be run on the same models:
//
//	go run ./internal/core/dtmc/gentra -family random -n 1000000 -absorb 0.05 -o /tmp/r6
//	go run ./internal/core/dtmc/gentra -family line -n 1000 -stay 0.999 -o /tmp/line
//
// random: n transient states of out-degree 8, as the package's benchmark
// draws them (same generator, same seed), then the target (state n) and a
// sink (n+1). lazy: the same with every transient row halved and a self-loop
// of 1/2 added. line: a birth-death line, states 0 (a sink) to n+1 (the
// target); each inner state stays put with probability stay and moves to
// either neighbour with (1−stay)/2. The move probability is rounded to a
// multiple of 2⁻⁵⁴ so that stay = 1 − 2·move is a float64 and every row sums
// to exactly 1: the answer from state i is then exactly i/(n+1).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
)

func main() {
	family := flag.String("family", "random", "random, lazy or line")
	n := flag.Int("n", 1000, "transient states (random, lazy) or inner states (line)")
	absorb := flag.Float64("absorb", 0.05, "random, lazy: each row's probability of leaving to the target or the sink")
	stay := flag.Float64("stay", 0.999, "line: the self-loop probability")
	out := flag.String("o", "chain", "output prefix: writes PREFIX.tra and PREFIX.lab")
	flag.Parse()
	if err := run(*family, *n, *absorb, *stay, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gentra:", err)
		os.Exit(2)
	}
}

// row is one state's transitions, sorted by successor.
type row struct {
	to   []int32
	prob []float64
}

func run(family string, n int, absorb, stay float64, out string) error {
	if n < 1 || n > math.MaxInt32-2 {
		return fmt.Errorf("-n %d: want 1 to %d", n, math.MaxInt32-2)
	}
	var rows func(yield func(row))
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
	default:
		return fmt.Errorf("-family %q: want random, lazy or line", family)
	}
	states, transitions := 0, 0
	rows(func(r row) { states++; transitions += len(r.to) })
	if err := writeFile(out+".tra", func(w *bufio.Writer) {
		fmt.Fprintf(w, "%d %d\n", states, transitions)
		var buf []byte
		s := 0
		rows(func(r row) {
			for i, t := range r.to {
				buf = strconv.AppendInt(buf[:0], int64(s), 10)
				buf = append(buf, ' ')
				buf = strconv.AppendInt(buf, int64(t), 10)
				buf = append(buf, ' ')
				buf = strconv.AppendFloat(buf, r.prob[i], 'g', -1, 64)
				buf = append(buf, '\n')
				w.Write(buf)
			}
			s++
		})
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

// randomRows draws the rows exactly as the dtmc package's randomSparseChain
// does with the benchmark's seed (42, n): out-degree 8, one edge to the target
// or the sink with probability absorb, repeated successors merged.
func randomRows(n int, absorb float64, lazy bool) func(func(row)) {
	const deg = 8
	return func(yield func(row)) {
		r := rand.New(rand.NewPCG(42, uint64(n)))
		w := make([]float64, deg-1)
		succ := make([]int32, deg)
		for s := range n {
			sum := 0.0
			for i := range w {
				w[i] = 0.1 + r.Float64()
				sum += w[i]
			}
			for i := range deg - 1 {
				succ[i] = int32(r.IntN(n))
			}
			succ[deg-1] = int32(n + r.IntN(2))
			probs := map[int32]float64{succ[deg-1]: absorb}
			for i := range deg - 1 {
				probs[succ[i]] += (1 - absorb) * w[i] / sum
			}
			if lazy {
				for t := range probs {
					probs[t] /= 2
				}
				probs[int32(s)] += 0.5
			}
			yield(sortedRow(probs))
		}
		for s := n; s < n+2; s++ {
			yield(row{[]int32{int32(s)}, []float64{1}})
		}
	}
}

func sortedRow(probs map[int32]float64) row {
	var r row
	for t := range probs {
		r.to = append(r.to, t)
	}
	sort.Slice(r.to, func(i, j int) bool { return r.to[i] < r.to[j] })
	for _, t := range r.to {
		r.prob = append(r.prob, probs[t])
	}
	return r
}

// lineRows is the birth-death line of n inner states with the self-loop stay.
func lineRows(n int, stay float64) func(func(row)) {
	move := math.Round((1-stay)/2*0x1p54) / 0x1p54
	self := 1 - 2*move // exact: 2·move is a multiple of 2⁻⁵³ below 1
	return func(yield func(row)) {
		yield(row{[]int32{0}, []float64{1}})
		for s := 1; s <= n; s++ {
			yield(row{[]int32{int32(s - 1), int32(s), int32(s + 1)}, []float64{move, self, move}})
		}
		yield(row{[]int32{int32(n + 1)}, []float64{1}})
	}
}
