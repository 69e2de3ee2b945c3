// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/agentguard/agentguard/internal/core/dtmc"
)

// runReach prints P(F target), or P(F≤k target), for every state of a chain
// in PRISM's explicit format: one "STATE PROBABILITY" line a state.
func runReach(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reach", flag.ContinueOnError)
	fs.SetOutput(stderr)
	traPath := fs.String("tra", "", "the chain: a PRISM explicit .tra file")
	labPath := fs.String("lab", "", "its labels: a PRISM explicit .lab file")
	target := fs.String("target", "", "the label of the target states")
	bound := fs.Int("bound", -1, "a step bound k: P(F<=k target) (default: unbounded)")
	safe := fs.Bool("safe", false, "print 1 - P, the probability of never reaching the target")
	tol := fs.Float64("tolerance", dtmc.DefaultTolerance, "guaranteed absolute error of the unbounded probabilities")
	limit := fs.Duration("time-limit", 0, "stop the solve after this long (e.g. 30s) with the best certified bound so far, exit status 4 (default: none)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "agentguard reach:", err)
		return 2
	}
	if *traPath == "" || *labPath == "" || *target == "" || fs.NArg() > 0 {
		return fail(errors.New("--tra, --lab and --target are required, and nothing else"))
	}
	start := time.Now()
	c, labels, err := readExplicit(*traPath, *labPath, stderr)
	if err != nil {
		return fail(err)
	}
	read := time.Since(start)
	l, ok := dtmc.FindLabel(labels, *target)
	if !ok {
		return fail(fmt.Errorf("--target %q: no such label in %s; labels: %s", *target, *labPath, dtmc.LabelNames(labels)))
	}
	if *limit < 0 {
		return fail(fmt.Errorf("--time-limit %v: want a positive duration", *limit))
	}
	sv, err := dtmc.NewSolver(dtmc.Options{Tolerance: *tol, TimeLimit: *limit, Progress: progressPrinter(stderr)})
	if err != nil {
		return fail(fmt.Errorf("--tolerance: %w", err))
	}
	p := make([]float64, c.NumStates())
	start = time.Now()
	var res dtmc.Result
	if *bound >= 0 {
		res, err = sv.BoundedReach(c, l.States, *bound, p)
	} else {
		res, err = sv.Reach(c, l.States, p)
	}
	timedOut := errors.Is(err, dtmc.ErrTimeLimit)
	if err != nil && !timedOut {
		return fail(err)
	}
	solve := time.Since(start)
	start = time.Now()
	if err := writeStates(stdout, p, *safe); err != nil {
		return fail(err)
	}
	// The method and the certified error go to stderr, so that stdout stays
	// PRISM's "STATE PROBABILITY" format.
	fmt.Fprintf(stderr, "agentguard reach: method: %s; error bound %.3g; %d states (%d probability 0, %d probability 1, %d solved); %d transitions; read %s, solve %s, write %s\n",
		res.Method, res.Bound, c.NumStates(), res.Prob0, res.Prob1, res.Maybe, c.NumTransitions(),
		read.Round(time.Millisecond), solve.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if timedOut {
		// The answers printed are certified, to the weaker bound only.
		fmt.Fprintln(stderr, "agentguard reach:", err)
		return exitTimeLimit
	}
	return 0
}

// exitTimeLimit is reach's exit status when --time-limit stopped the solve
// before the answers met --tolerance.
const exitTimeLimit = 4

// progressPrinter writes the solver's progress reports as stderr lines.
func progressPrinter(stderr io.Writer) func(dtmc.Progress) {
	return func(pr dtmc.Progress) {
		line := fmt.Sprintf("agentguard reach: %s: %s", pr.Elapsed.Round(100*time.Millisecond), pr.Phase)
		if !math.IsNaN(pr.Done) {
			line += fmt.Sprintf(", %.0f%% done", 100*pr.Done)
		}
		if !math.IsNaN(pr.Residual) {
			line += fmt.Sprintf(", residual %.3g", pr.Residual)
		}
		if !math.IsNaN(pr.Bound) {
			line += fmt.Sprintf(", certified within %.3g", pr.Bound)
		}
		if pr.Left > 0 {
			line += fmt.Sprintf(", about %s left", pr.Left.Round(time.Second))
		}
		fmt.Fprintln(stderr, line)
	}
}

// writeStates prints one "STATE PROBABILITY" line a state (1 − P with safe),
// with 15 significant digits, through one buffer rather than a write a line.
func writeStates(w io.Writer, p []float64, safe bool) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var buf []byte
	for s, v := range p {
		if safe {
			v = 1 - v
		}
		buf = strconv.AppendInt(buf[:0], int64(s), 10)
		buf = append(buf, ' ')
		buf = strconv.AppendFloat(buf, v, 'g', 15, 64)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// readExplicit reads a .tra and its .lab, printing the warnings.
func readExplicit(traPath, labPath string, stderr io.Writer) (*dtmc.Chain, []dtmc.Label, error) {
	tf, err := os.Open(traPath)
	if err != nil {
		return nil, nil, err
	}
	defer tf.Close()
	c, warnings, err := dtmc.ReadTra(tf, traPath)
	if err != nil {
		return nil, nil, err
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "agentguard: warning:", w)
	}
	lf, err := os.Open(labPath)
	if err != nil {
		return nil, nil, err
	}
	defer lf.Close()
	labels, err := dtmc.ReadLab(lf, labPath, c.NumStates())
	return c, labels, err
}
