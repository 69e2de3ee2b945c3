// SPDX-License-Identifier: Apache-2.0

// Command gen writes generated household (stove) episodes as OTLP/JSON, one
// file per episode, and their labels.json, in the layout and schema of
// testdata/traces/household-langgraph:
//
//	go run ./test/scenarios/household-gen -n 200 -seed 1 -o DIR
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/test/sim/household"
)

// errUsage marks a bad command line: exit status 2, as flag's own errors.
var errUsage = errors.New("usage")

func main() {
	err := run(os.Args[1:], os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp): // -h: the usage was asked for
	case errors.Is(err, errUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	n     int
	dir   string
	start string
	opts  household.Options
}

func parse(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := c.flags(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, fmt.Errorf("%w: %v", errUsage, err) // flag has printed the error and the usage
	}
	if err := c.check(fs); err != nil {
		fmt.Fprintln(stderr, "gen:", err)
		fs.Usage()
		return c, errUsage
	}
	return c, nil
}

// flags binds the command line to c.
func (c *config) flags(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: gen -o DIR [flags]\n\n"+
			"Writes N generated household (stove) episodes to DIR: ep-001.json, … (OTLP/JSON, one trace\n"+
			"each, shaped like the LangGraph/OpenInference fixtures) and labels.json.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.IntVar(&c.n, "n", 200, "`N`, the number of episodes")
	fs.Int64Var(&c.opts.Seed, "seed", 1, "random seed: the same seed writes the same files")
	fs.StringVar(&c.dir, "o", "", "`DIR`, the output directory, created if missing (required)")
	fs.StringVar(&c.start, "start", household.DefaultStart.Format(time.RFC3339),
		"start `time` of the first episode (RFC 3339)")
	fs.DurationVar(&c.opts.ModelLatency, "model-latency", 0, "mean duration of a model call, e.g. 1.5s (0: the fixtures' scripted model, about 1ms)")
	fs.Float64Var(&c.opts.TurnOffFirst, "turn-off-first", household.DefaultTurnOffFirst,
		"probability of turning the stove off before leaving for the second task")
	fs.Float64Var(&c.opts.Dawdle, "dawdle", household.DefaultDawdle,
		"probability of checking the pot (and maybe waiting) before the second task")
	fs.Float64Var(&c.opts.Remember, "remember", household.DefaultRemember,
		"per decision away with the stove on, probability of remembering it and going back")
	fs.Float64Var(&c.opts.ReturnWhenOff, "return-when-off", household.DefaultReturnWhenOff,
		"per decision after the second task with the stove off, probability of going back")
	return fs
}

// check validates the flags and resolves -start and the probabilities.
func (c *config) check(fs *flag.FlagSet) error {
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	case c.dir == "":
		return errors.New("-o DIR is required")
	case c.n < 1:
		return fmt.Errorf("-n %d: need at least one episode", c.n)
	}
	start, err := time.Parse(time.RFC3339, c.start)
	if err != nil {
		return fmt.Errorf("-start: %w", err)
	}
	c.opts.Start = start
	probabilities := []struct {
		flag string
		p    *float64
	}{
		{"turn-off-first", &c.opts.TurnOffFirst}, {"dawdle", &c.opts.Dawdle},
		{"remember", &c.opts.Remember}, {"return-when-off", &c.opts.ReturnWhenOff},
	}
	for _, f := range probabilities {
		if *f.p < 0 || *f.p > 1 {
			return fmt.Errorf("-%s %v: a probability must be in [0, 1]", f.flag, *f.p)
		}
		if *f.p == 0 { // a flag's 0 means never, not Options' default
			*f.p = household.Never
		}
	}
	return nil
}

func run(args []string, stderr io.Writer) error {
	c, err := parse(args, stderr)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	episodes := household.Generate(c.opts, c.n)
	for _, e := range episodes {
		if err := writeEpisode(c.dir, e); err != nil {
			return err
		}
	}
	// labels.json as the fixtures' is laid out: one-space indents.
	labels, err := json.MarshalIndent(household.Labels(episodes), "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.dir, "labels.json"), append(labels, '\n'), 0o644)
}

// writeEpisode writes DIR/<ID>.json, the episode's trace as OTLP/JSON.
func writeEpisode(dir string, e household.Episode) error {
	raw, err := (&ptrace.JSONMarshaler{}).MarshalTraces(e.Traces)
	if err != nil {
		return fmt.Errorf("%s: %w", e.ID, err)
	}
	return os.WriteFile(filepath.Join(dir, e.ID+".json"), raw, 0o644)
}
