// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentguard/agentguard/test/harness"
)

// cpuRun is a configuration of rows 1–3 with what it is fed, measured once
// a round; key names it in the rows.
type cpuRun struct {
	key   string
	setup setup
	load  *load
}

// cpuRow is a ratio of two runs' CPU per span.
type cpuRow struct {
	row      int
	measure  string
	num, den string // cpuRun keys
	goal     float64
}

func cpuRows() []cpuRow {
	return []cpuRow{
		{1, "household CPU per span ÷ a plain pass-through", "household", "plain pass-through", 1.15},
		{2, "household CPU per span ÷ a pass-through with `batch`", "household", "pass-through with batch", 1.3},
		{3, "temporalcheck (weather) CPU per span ÷ a pass-through with `batch`", "weather", "pass-through with batch (weather spans)", 1.2},
	}
}

// cpuCost measures the runs rows 1–3 ask for, round by round, and sets
// their CPU per span side by side.
func cpuCost(o options, sk *sink) ([]result, error) {
	var rows []cpuRow
	for _, r := range cpuRows() {
		if r.row == 3 && o.weather != defaultWeather {
			r.measure += ", " + o.weather
		}
		if o.rows[r.row] {
			rows = append(rows, r)
		}
	}
	runs, err := cpuRuns(o, rows)
	if err != nil {
		return nil, err
	}
	perSpan, err := rounds(o, sk, runs)
	if err != nil {
		return nil, err
	}
	var out []result
	for _, r := range rows {
		out = append(out, cpuResult(r, perSpan[r.num], perSpan[r.den]))
	}
	return out, nil
}

// cpuRuns are the runs the rows compare, each once. The household
// configurations are fed all three recorded episodes (one that becomes
// unsafe, one saved in time, one that turns the stove off first), the
// weather ones ADK's conversations; a load is built only if a run needs it.
func cpuRuns(o options, rows []cpuRow) ([]cpuRun, error) {
	all := []struct {
		key   string
		setup setup
		load  string
	}{
		{"plain pass-through", plainSetup(), "household"},
		{"pass-through with batch", batchSetup(), "household"},
		{"household", householdSetup(), "household"},
		{"pass-through with batch (weather spans)", batchSetup(), "weather"},
		{"weather", weatherSetup(o.weather), "weather"},
	}
	loads := map[string]*load{}
	var runs []cpuRun
	for _, run := range all {
		if !slices.ContainsFunc(rows, func(r cpuRow) bool { return r.num == run.key || r.den == run.key }) {
			continue
		}
		if loads[run.load] == nil {
			var err error
			if loads[run.load], err = cpuLoad(run.load, o.n); err != nil {
				return nil, err
			}
		}
		runs = append(runs, cpuRun{run.key, run.setup, loads[run.load]})
	}
	return runs, nil
}

func cpuLoad(name string, n int) (*load, error) {
	if name == "weather" {
		return weatherLoad(n)
	}
	return householdLoad(n, []string{"ep-001", "ep-004", "ep-010"})
}

// rounds measures every run once a round, each in a fresh collector, the
// order rotated by one each round: a run is not always the first after a
// build, or after the heaviest. It returns each run's µs a span by round.
func rounds(o options, sk *sink, runs []cpuRun) (map[string][]float64, error) {
	perSpan := map[string][]float64{}
	for r := range o.rounds {
		for k := range runs {
			run := runs[(r+k)%len(runs)]
			us, err := cpuPerSpan(o, sk, run, fmt.Sprintf("cpu-%d-%d.log", r+1, k), profilePath(o, run, r))
			if err != nil {
				return nil, fmt.Errorf("round %d, %s: %w", r+1, run.key, err)
			}
			progress("round %d/%d %-40s %.2f µs a span", r+1, o.rounds, run.key, us)
			perSpan[run.key] = append(perSpan[run.key], us)
		}
	}
	return perSpan, nil
}

// cpuPerSpan runs one configuration on its load and returns the collector's
// CPU time, from the first request sent to the last span exported, in µs a
// span.
func cpuPerSpan(o options, sk *sink, run cpuRun, log, profile string) (float64, error) {
	col, otlp, pprofAddr, err := startProfiled(o, run.setup, sk, log, profile != "")
	if err != nil {
		return 0, err
	}
	defer col.Kill()
	sk.reset()
	if profile != "" {
		done := startProfile(pprofAddr, profile, o.profileSeconds)
		defer func() { <-done }()
	}
	before, err := harness.ProcessCPU(col.Pid())
	if err != nil {
		return 0, err
	}
	retries, err := send(o, otlp, run.load.requests)
	if err != nil {
		return 0, err
	}
	if err := sk.waitSpans(run.load.spans, col.Alive); err != nil {
		return 0, fmt.Errorf("%w (%d requests refused and sent again); its log: %s", err, retries, col.Log())
	}
	after, err := harness.ProcessCPU(col.Pid())
	if err != nil {
		return 0, err
	}
	progress("%s: %d spans in %d export requests", run.key, sk.spans.Load(), sk.posts.Load())
	if retries > 0 {
		progress("%s: %d requests refused and sent again", run.key, retries)
	}
	if profile != "" { // after the CPU was read: fetching it costs the collector some
		allocs := strings.TrimSuffix(profile, ".pb.gz") + "-allocs.pb.gz"
		if err := fetchPprof(pprofAddr, "allocs", allocs); err != nil {
			progress("profile %s: %v", allocs, err)
		}
	}
	return (after - before).Seconds() * 1e6 / float64(run.load.spans), nil
}

// send posts a run's requests: paced (-every), or as fast as the senders
// can. It returns how many were refused and sent again.
func send(o options, otlp string, requests [][]byte) (int, error) {
	if o.every == 0 {
		return harness.SendAllTraces(otlp, requests, o.senders)
	}
	var retries int
	began := time.Now()
	err := sendPaced(otlp, requests, o.every, nil, func(n int) { retries += n })
	// A collector slower than the pace holds the sender back: say how far.
	took := time.Since(began)
	progress("sent %d requests in %v, one every %v (paced at %v)", len(requests), took.Round(time.Millisecond),
		(took / time.Duration(max(1, len(requests)))).Round(time.Microsecond), o.every)
	return retries, err
}

// cpuResult sets a row's two runs side by side, round by round.
func cpuResult(r cpuRow, num, den []float64) result {
	ratios := make([]float64, len(num))
	for i := range num {
		ratios[i] = num[i] / den[i]
	}
	m := median(ratios)
	return result{
		row:     r.row,
		measure: r.measure,
		figure: fmt.Sprintf("%.2f× median of %d round(s) (%.2f–%.2f); %s %.2f µs a span, %s %.2f (medians)",
			m, len(ratios), slices.Min(ratios), slices.Max(ratios), r.num, median(num), r.den, median(den)),
		goal: fmt.Sprintf("≤ %g×", r.goal),
		met:  m <= r.goal,
	}
}

// steadyLoad is row 7's: row 3's configurations fed n conversations, one
// request every so long, a load the collector keeps up with for seconds
// (make cost's rows 1–3 are bursts of under a second).
type steadyLoad struct {
	n     int
	every time.Duration
}

// steadyCost is row 7: row 3 in a steady load.
func steadyCost(o options, sk *sink) (result, error) {
	o.n, o.every = o.steady.n, o.steady.every
	o.dir = filepath.Join(o.dir, "steady") // its collectors' logs beside rows 1–3's
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return result{}, err
	}
	row := cpuRow{7, fmt.Sprintf("temporalcheck (weather) CPU per span ÷ a pass-through with `batch`, a steady load: %d conversations, one every %v", o.n, o.every),
		"weather", "pass-through with batch (weather spans)", 1.2}
	runs, err := cpuRuns(o, []cpuRow{row})
	if err != nil {
		return result{}, err
	}
	perSpan, err := rounds(o, sk, runs)
	if err != nil {
		return result{}, err
	}
	return cpuResult(row, perSpan[row.num], perSpan[row.den]), nil
}
