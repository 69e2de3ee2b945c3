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

// runExport writes a JSON model as a PRISM language model, or as PRISM
// explicit .tra and .lab files, so that PRISM or Storm can check it.
func runExport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	modelPath := fs.String("model", "", "the JSON model file")
	prism := fs.String("prism", "", "write the PRISM language model here (.pm)")
	tra := fs.String("tra", "", "write the explicit transitions here (.tra, with --lab)")
	lab := fs.String("lab", "", "write the explicit labels here (.lab, with --tra)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "agentguard export:", err)
		return 2
	}
	explicit := *tra != "" || *lab != ""
	switch {
	case *modelPath == "" || fs.NArg() > 0:
		return fail(errors.New("--model is required, and nothing else"))
	case (*prism != "") == explicit:
		return fail(errors.New("want either --prism OUT.pm or --tra OUT.tra --lab OUT.lab"))
	case explicit && (*tra == "" || *lab == ""):
		return fail(errors.New("--tra and --lab go together"))
	}
	m, err := readModel(*modelPath, "", stderr)
	if err != nil {
		return fail(err)
	}
	if *prism != "" {
		err = writeFile(*prism, func(w io.Writer) error {
			return dtmc.WritePRISM(w, m.Chain(), m.InitialState(), m.Labels(), m.StateNames())
		})
	} else {
		err = writeFile(*tra, func(w io.Writer) error { return dtmc.WriteTra(w, m.Chain()) })
		if err == nil {
			err = writeFile(*lab, func(w io.Writer) error { return dtmc.WriteLab(w, m.Labels(), len(m.States())) })
		}
	}
	if err != nil {
		return fail(err)
	}
	return 0
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
