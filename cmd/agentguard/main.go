// SPDX-License-Identifier: Apache-2.0

// Command agentguard runs agentguard's checks offline: temporal expressions
// over signals, assertions over recorded OTLP/JSON traces, Markov-chain
// learning, reachability and PAC reports.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// A command runs with its arguments (without its own name) and returns the
// process exit code: 0 ran, 1 found a violation, 2 usage or input error;
// check --strict adds 3, no violation but warnings (exitStrict).
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

func commands() map[string]command {
	return map[string]command{
		"te":       {"evaluate a temporal expression over named bit signals", runTE},
		"check":    {"check temporalcheck assertions over recorded OTLP/JSON traces (a CI gate)", runCheck},
		"reach":    {"reachability probabilities of every state of a PRISM explicit chain", runReach},
		"pac":      {"PAC report of a learned model: which states need how many more visits", runPAC},
		"export":   {"write a learned model as PRISM language or explicit .tra/.lab files", runExport},
		"learn":    {"learn a probguard model from recorded OTLP/JSON traces (or merge shards) and print its PAC report", runLearn},
		"risk":     {"every state of a probguard model: P_safe, flags and the most likely way to unsafe", runRisk},
		"mine":     {"propose the pattern-library assertions that hold on every group of good traces, as a processor block", runMine},
		"evaluate": {"replay held-out traces through probguard at several thresholds: warnings in time, lead, false alarms", runEvaluate},
		"abstract": {"choose probguard's predicates from training episodes by cross-validation, and write the block and its model", runAbstract},
	}
}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(cmds, stderr)
		return 2
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "agentguard: unknown command %q\n", args[0])
		usage(cmds, stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(cmds map[string]command, w io.Writer) {
	fmt.Fprintln(w, "usage: agentguard COMMAND [flags]")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, cmds[n].summary)
	}
}
