// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/agentguard/agentguard/internal/core/dtmc"
)

// runPAC prints the PAC report of a JSON model: per state the visits, the
// bound H*, the visits the stopping rule requires, and whether the model is
// (ε, δ)-certified.
func runPAC(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pac", flag.ContinueOnError)
	fs.SetOutput(stderr)
	modelPath := fs.String("model", "", "the JSON model file")
	eps := fs.Float64("epsilon", 0.1, "the accuracy ε of every probability")
	delta := fs.Float64("delta", 0.05, "the confidence 1 − δ")
	unsafe := fs.String("unsafe", "", "the unsafe formula (default: the model's)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "agentguard pac:", err)
		return 2
	}
	if *modelPath == "" || fs.NArg() > 0 {
		return fail(errors.New("--model is required, and nothing else"))
	}
	m, err := readModel(*modelPath, *unsafe, stderr)
	if err != nil {
		return fail(err)
	}
	sv, err := dtmc.NewSolver(dtmc.Options{})
	if err != nil {
		return fail(err)
	}
	r, err := m.PAC(*eps, *delta, sv)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", *modelPath, err))
	}
	if err := r.WriteText(stdout); err != nil {
		return fail(err)
	}
	return 0
}

// readModel reads a JSON model, with its unsafe formula replaced if unsafe
// is not empty, and prints what learning noted.
func readModel(path, unsafe string, stderr io.Writer) (*dtmc.Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := dtmc.ReadModel(f, path)
	if err != nil {
		return nil, err
	}
	if unsafe != "" {
		spec := m.Spec()
		spec.Unsafe = unsafe
		if m, err = dtmc.NewModel(spec, m.States(), m.Counts()); err != nil {
			return nil, fmt.Errorf("--unsafe: %w", err)
		}
	}
	for _, n := range m.Notes() {
		fmt.Fprintln(stderr, "agentguard: note:", n)
	}
	return m, nil
}
