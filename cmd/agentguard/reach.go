package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

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
	c, labels, err := readExplicit(*traPath, *labPath, stderr)
	if err != nil {
		return fail(err)
	}
	l, ok := dtmc.FindLabel(labels, *target)
	if !ok {
		return fail(fmt.Errorf("--target %q: no such label in %s; labels: %s", *target, *labPath, dtmc.LabelNames(labels)))
	}
	sv, err := dtmc.NewSolver(dtmc.Options{Tolerance: *tol})
	if err != nil {
		return fail(fmt.Errorf("--tolerance: %w", err))
	}
	p := make([]float64, c.NumStates())
	if *bound >= 0 {
		_, err = sv.BoundedReach(c, l.States, *bound, p)
	} else {
		_, err = sv.Reach(c, l.States, p)
	}
	if err != nil {
		return fail(err)
	}
	for s, v := range p {
		if *safe {
			v = 1 - v
		}
		fmt.Fprintf(stdout, "%d %.15g\n", s, v)
	}
	return 0
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
