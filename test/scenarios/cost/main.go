// SPDX-License-Identifier: Apache-2.0

// Command cost measures what agentguard costs beside the collector's own
// paths, side by side in one run (issue 27): each configuration of the built
// collector in a fresh process of its own, fed real agent spans over
// OTLP/HTTP (protobuf) by this process and exporting to a sink in it, the
// configurations interleaved round by round so that a change in the
// machine's load falls on all of them alike. It prints one markdown table,
// each row with the goal and whether it is met, between the load
// at start and at end. A goal missed is a figure, not a failure: it fails
// only when it cannot measure (a collector that does not start, an
// acknowledged span lost, no verdict record).
//
// The rows: 1–3 the collector's CPU per span (utime + stime from /proc),
// the household and weather examples as shipped against a plain
// pass-through and one with the batch processor; 4 the resident memory an
// open conversation group costs, net of a pass-through fed the same spans;
// 5 the time from a span sent to its verdict log record at the logs
// backend; 6 temporalcheck's parallel benchmark at 2 cores against 1; 7
// row 3 in a steady load (rows 1–3 are bursts of under a second: four
// senders as fast as they go).
//
//	go run ./test/scenarios/cost -rounds 5 -n 1500
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentguard/agentguard/test/harness"
)

// defaultWeather is the weather configuration row 3 measures by default.
const defaultWeather = "examples/weather/collector.yaml"

// options are the flags, and where the run's files go.
type options struct {
	rounds  int           // rows 1–3: each configuration once a round
	n       int           // episodes (conversations) per configuration a round, and for row 5
	groups  int           // row 4's open groups
	senders int           // rows 1–3's concurrent senders
	every   time.Duration // rows 1–3: requests one after another this far apart (0: as fast as the senders go)
	steady  steadyLoad    // row 7's
	bench   bool          // row 6
	bin     string        // the built collector
	rows    map[int]bool  // the rows to measure
	dir     string        // the configurations written and the collectors' logs
	profile string        // rows 1–3: where each run's CPU and allocation profiles go ("": none)
	weather string        // row 3's temporalcheck configuration
	// profileSeconds is how long each CPU run is profiled, from its first
	// request (-n 1500 runs last about as long as the default).
	profileSeconds int
}

func main() {
	o, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cost:", err)
		os.Exit(2)
	}
	if o.dir, err = os.MkdirTemp("", "cost-"); err != nil {
		fmt.Fprintln(os.Stderr, "cost:", err)
		os.Exit(1)
	}
	if err := run(o, os.Stdout); err != nil {
		// The collectors' logs, which the error may name, stay.
		fmt.Fprintf(os.Stderr, "cost: %v\n(the collectors' logs and configurations are in %s)\n", err, o.dir)
		os.Exit(1)
	}
	os.RemoveAll(o.dir)
}

func parseFlags() (options, error) {
	var o options
	flag.IntVar(&o.rounds, "rounds", 5, "rows 1-3: rounds, each running every configuration once, in a fresh process")
	flag.IntVar(&o.n, "n", 1500, "episodes (weather: conversations) per configuration per round, and row 5's episodes")
	flag.IntVar(&o.groups, "groups", 20000, "row 4: open conversation groups")
	flag.IntVar(&o.senders, "senders", 4, "rows 1-3: concurrent senders")
	flag.IntVar(&o.steady.n, "steady-n", 10000, "row 7: conversations a round")
	flag.DurationVar(&o.steady.every, "steady-every", time.Millisecond, "row 7: one request (a conversation) every this long")
	flag.DurationVar(&o.every, "every", 0, "rows 1-3: send the requests one after another this far apart, a steady load below saturation, instead of as fast as -senders can (0: -senders)")
	flag.BoolVar(&o.bench, "bench", true, "row 6: run temporalcheck's ThroughputParallel benchmark at 1 and 2 cores")
	flag.StringVar(&o.bin, "collector", "dist/otelcol-agentguard", "the built collector")
	flag.StringVar(&o.profile, "profile", "", "write each CPU run's profile and allocations (rows 1-3) and each collector's heap (row 4) to this directory, from the collector's pprof extension")
	flag.StringVar(&o.weather, "weather", defaultWeather, "row 3: the weather configuration measured (examples/weather/guard.yaml: judged on arrival, for the decisions endpoint)")
	flag.IntVar(&o.profileSeconds, "profile-seconds", 3, "with -profile: how long each CPU run is profiled, from its first request (a run longer than this is profiled only in part)")
	rows := flag.String("rows", "1,2,3,4,5,6,7", "the rows to measure, by number")
	flag.Parse()
	if o.rounds < 1 || o.n < 1 || o.groups < 1 || o.senders < 1 || o.profileSeconds < 1 {
		return o, errors.New("-rounds, -n, -groups, -senders and -profile-seconds must be at least 1")
	}
	if o.every < 0 || o.steady.n < 1 || o.steady.every <= 0 {
		return o, errors.New("-every must not be negative, -steady-n and -steady-every must be positive")
	}
	var err error
	o.rows, err = parseRows(*rows)
	return o, err
}

// parseRows reads -rows, a comma-separated list of row numbers.
func parseRows(s string) (map[int]bool, error) {
	rows := map[int]bool{}
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 7 {
			return nil, fmt.Errorf("-rows %q: want row numbers from 1 to 7", s)
		}
		rows[n] = true
	}
	return rows, nil
}

// result is one row of the table.
type result struct {
	row     int
	measure string
	figure  string
	goal    string
	met     bool
}

// run measures the rows asked for, one collector at a time, and prints
// the table to w.
func run(o options, w io.Writer) error {
	loadAtStart := harness.LoadAvg()
	sk, err := startSink()
	if err != nil {
		return err
	}
	defer sk.close()
	var results []result
	if o.rows[1] || o.rows[2] || o.rows[3] {
		rs, err := cpuCost(o, sk)
		if err != nil {
			return err
		}
		results = append(results, rs...)
	}
	for _, r := range []struct {
		row     int
		measure func(options, *sink) (result, error)
	}{{4, memoryCost}, {5, logLatency}, {6, parallelScaling}, {7, steadyCost}} {
		if !o.rows[r.row] || (r.row == 6 && !o.bench) {
			continue
		}
		res, err := r.measure(o, sk)
		if err != nil {
			return fmt.Errorf("row %d: %w", r.row, err)
		}
		results = append(results, res)
	}
	printTable(w, o, loadAtStart, results, harness.LoadAvg())
	return nil
}

func printTable(w io.Writer, o options, loadAtStart string, results []result, loadAtEnd string) {
	sending := fmt.Sprintf("%d senders", o.senders)
	if o.every > 0 {
		sending = fmt.Sprintf("one request every %v", o.every)
	}
	fmt.Fprintf(w, "cost of %s: %d round(s), %d episodes (weather: conversations) per configuration a round, %s, %d groups\n\n",
		o.bin, o.rounds, o.n, sending, o.groups)
	fmt.Fprintf(w, "load at start: %s\n\n", loadAtStart)
	fmt.Fprintln(w, "| # | measure | figure | goal | met |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	slices.SortFunc(results, func(a, b result) int { return a.row - b.row })
	for _, r := range results {
		met := "no"
		if r.met {
			met = "yes"
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s |\n", r.row, r.measure, r.figure, r.goal, met)
	}
	fmt.Fprintf(w, "\nload at end: %s\n", loadAtEnd)
}

// progress says what a measurement is doing, on stderr: stdout is the table.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

// median of xs (not empty), which it does not reorder.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
