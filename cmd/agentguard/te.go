// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/agentguard/agentguard/internal/core/texpr"
)

// signals collects repeated --signal NAME=BITS flags in declaration order.
type signals struct {
	names []string
	bits  []string
}

func (s *signals) String() string { return strings.Join(s.names, ",") }

func (s *signals) Set(v string) error {
	name, bits, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=BITS, got %q", v)
	}
	if strings.Trim(bits, "01") != "" {
		return fmt.Errorf("signal %s: bits must be 0s and 1s, got %q", name, bits)
	}
	for _, n := range s.names {
		if n == name {
			return fmt.Errorf("signal %s declared twice", name)
		}
	}
	if len(s.names) == texpr.MaxPredicates {
		return fmt.Errorf("at most %d signals", texpr.MaxPredicates)
	}
	s.names = append(s.names, name)
	s.bits = append(s.bits, bits)
	return nil
}

// events turns the signals into one event per cycle; a signal shorter than the
// longest is false past its end.
func (s *signals) events() []texpr.Event {
	n := 0
	for _, b := range s.bits {
		n = max(n, len(b))
	}
	evs := make([]texpr.Event, n)
	for c := range evs {
		evs[c] = texpr.Event{Time: int64(10 * (c + 1)), Ref: c + 1}
		for i, b := range s.bits {
			if c < len(b) && b[c] == '1' {
				evs[c].Bits |= 1 << uint(i)
			}
		}
	}
	return evs
}

func runTE(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("te", flag.ContinueOnError)
	fs.SetOutput(stderr)
	expr := fs.String("expr", "", "the temporal expression")
	var sigs signals
	fs.Var(&sigs, "signal", "NAME=BITS: a predicate true at the cycles whose bit is 1, cycle 1 first (repeatable)")
	never := fs.Bool("never", false, "a never assertion: a match is a violation (default: always)")
	onEnd := fs.String("on-end", "inconclusive", "live evaluations at the end: inconclusive, fail or ignore")
	trace := fs.Bool("trace", false, "print each verdict's trace tree")
	maxThreads := fs.Int("max-threads", texpr.DefaultMaxThreads, "cap on live evaluations")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := teCheckArgs(*expr, fs.Args()); err != nil {
		fmt.Fprintln(stderr, "agentguard te:", err)
		return 2
	}
	policy, err := texpr.ParseEndPolicy(*onEnd)
	if err != nil {
		fmt.Fprintln(stderr, "agentguard te: --on-end:", err)
		return 2
	}
	e, err := texpr.Parse(*expr, sigs.names)
	if err != nil {
		fmt.Fprintf(stderr, "agentguard te: --expr %q: %v\n", *expr, err)
		return 2
	}
	a := texpr.Assertion{Expr: e, Never: *never, OnEnd: policy, MaxThreads: *maxThreads, Passes: true}
	if *trace {
		a.Trees = texpr.TreesAll
	}
	printVerdicts(stdout, texpr.NewMonitor(a), sigs.events(), *trace)
	return 0
}

func teCheckArgs(expr string, rest []string) error {
	if expr == "" {
		return errors.New("--expr is required")
	}
	if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q", rest[0])
	}
	return nil
}

func printVerdicts(w io.Writer, m *texpr.Monitor, evs []texpr.Event, trace bool) {
	ts := func(cycle int) int64 { return int64(10 * cycle) }
	print := func(vs []texpr.Verdict) {
		for _, v := range vs {
			printVerdict(w, v, trace, ts)
		}
	}
	for _, ev := range evs {
		print(m.Step(ev))
	}
	print(m.Finish())
}

func printVerdict(w io.Writer, v texpr.Verdict, trace bool, ts texpr.Timestamps) {
	switch {
	case v.Kind == texpr.Pending:
		fmt.Fprintf(w, "PENDING %d\n", v.Start)
	case v.Kind == texpr.Error:
		fmt.Fprintf(w, "ERROR %d/%d %s\n", v.Start, v.End, v.TreeNote)
	case !trace:
		for range max(v.Count, 1) { // a line per match; a failure has none
			fmt.Fprintf(w, "%s %d/%d\n", v.Kind, v.Start, v.End)
		}
	case v.Trees == nil:
		fmt.Fprintf(w, "%s %d/%d (%s)\n\n", v.Kind, v.Start, v.End, v.TreeNote)
	default:
		for _, t := range v.Trees {
			fmt.Fprintf(w, "%s\n%s\n", v.Kind, t.Format(ts))
		}
	}
}
