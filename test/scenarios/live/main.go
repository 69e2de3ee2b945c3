// SPDX-License-Identifier: Apache-2.0

// Command live checks agentguard against a real agent SDK: it starts the
// built otelcol-agentguard (the weather agents' configuration) on loopback
// with a logs sink for its verdicts, runs the live app (examples/live/app:
// Google ADK for TypeScript, the paper's three agents on a scripted model,
// ADK's own tracing exported over OTLP/HTTP and to an OTLP/JSON file), waits
// for the conversations to end and their verdicts to come, runs `agentguard
// check` on the file, and compares, conversation by conversation, what the
// collector reported with what check reported.
//
// It prints false alarms on correct conversations, misses on faulty ones,
// and the delay from a trace's last export to its verdict record; it exits 1
// on any disagreement, false alarm, miss, or span the collector and the file
// do not share. Everything it read stays in -out.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentguard/agentguard/test/harness"
)

func main() {
	var o options
	flag.StringVar(&o.collector, "collector", "dist/otelcol-agentguard", "the otelcol-agentguard binary (make dist)")
	flag.StringVar(&o.config, "config", "examples/weather/collector.yaml", "the collector configuration, also given to agentguard check")
	flag.StringVar(&o.app, "app", "examples/live/app", "the live app's folder (npm ci done)")
	flag.StringVar(&o.out, "out", "dist/live", "where the spans, the verdicts, the collector's log and check's report are kept (emptied first)")
	flag.IntVar(&o.n, "n", 24, "conversations of each kind")
	flag.IntVar(&o.concurrency, "concurrency", 4, "conversations the app plays at once")
	flag.DurationVar(&o.groupTimeout, "group-timeout", 2*time.Second, "AGENTGUARD_GROUP_TIMEOUT: a conversation ends this long after its last trace")
	flag.DurationVar(&o.pause, "pause", 0, "a user's pause between turns (shorter than group-timeout, or the conversation ends early)")
	flag.DurationVar(&o.bspDelay, "bsp-delay", 20*time.Millisecond, "OTEL_BSP_SCHEDULE_DELAY of the app's batch span processors")
	flag.Parse()
	ok, err := o.run(os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "live:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

type options struct {
	collector, config, app, out string
	n, concurrency              int
	groupTimeout, bspDelay      time.Duration
	pause                       time.Duration
}

// settle is how long past group_timeout the last verdict can take: the
// configuration's wait (2s) bounds when a trace is released, then a tick and
// the export.
const settle = 3 * time.Second

func (o options) run(w io.Writer) (bool, error) {
	s, err := o.start(w)
	if err != nil {
		return false, err
	}
	defer s.close()
	// An app that failed may still have played and exported most: judge
	// what it did, and fail the run.
	appErr := o.runApp(s.addr, s.dir)
	if err := s.col.Alive(); err != nil {
		return false, err
	}
	r, err := readRun(s.dir)
	if err != nil {
		return false, errors.Join(appErr, err)
	}
	problems := r.problems()
	if appErr != nil {
		problems = append([]string{appErr.Error() + " (its own lines above)"}, problems...)
	}
	printPlayed(w, r)
	reported, err := s.collect(w, r)
	if err != nil {
		return false, err
	}
	problems = append(problems, s.passedOn(len(r.sentSpans()), reported)...)
	checked, err := s.check()
	if err != nil {
		return false, err
	}
	return s.conclude(w, r, reported, checked, problems), nil
}

// session is one run: its folder, the collector and the sink of its
// verdicts.
type session struct {
	options
	dir  string // -out, absolute
	addr string // the collector's OTLP/HTTP address
	sink *harness.LogSink
	col  *harness.Collector
}

// start empties the folder and starts the sink and the collector on free
// loopback ports.
func (o options) start(w io.Writer) (*session, error) {
	dir, err := filepath.Abs(o.out)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	addrs, err := harness.FreeAddrs(1)
	if err != nil {
		return nil, err
	}
	s := &session{options: o, dir: dir, addr: addrs[0]}
	if s.sink, err = harness.StartLogSink(); err != nil {
		return nil, err
	}
	// Its own metrics off (their default port may be held), its log
	// unsampled (the debug exporter's line for every batch is counted).
	s.col, err = harness.StartCollector(harness.CollectorOptions{Bin: o.collector, Configs: []string{o.config},
		Sets: []string{"service::telemetry::metrics::level=none", "service::telemetry::logs::sampling::enabled=false"},
		Log:  filepath.Join(dir, "collector.log"), Env: []string{
			"AGENTGUARD_OTLP_HTTP=" + s.addr,
			"AGENTGUARD_VERDICTS_ENDPOINT=" + s.sink.Endpoint(),
			"AGENTGUARD_GROUP_TIMEOUT=" + o.groupTimeout.String(),
		}})
	if err != nil {
		s.sink.Close()
		return nil, err
	}
	fmt.Fprintf(w, "otelcol-agentguard on %s (%s, group_timeout %v); the app's OTEL_BSP_SCHEDULE_DELAY %v; files in %s\n",
		s.addr, o.config, o.groupTimeout, o.bspDelay, o.out)
	return s, nil
}

// close stops the collector (if still running), then the sink.
func (s *session) close() {
	s.col.Stop()
	s.sink.Close()
}

// printPlayed says what the app exported, and how many of its tool calls
// share a start time.
func printPlayed(w io.Writer, r *run) {
	same, misordered, calls := r.ties()
	fmt.Fprintf(w, "the app exported %d spans of %d conversations in %s; the file holds %d spans\n",
		len(r.sentSpans()), len(r.convs), plural(len(r.exports), "request"), len(r.fileSpans))
	fmt.Fprintf(w, "of the %d tool calls, %d started in the same millisecond as another of their conversation's; end times would misplace %d\n",
		calls, same, misordered)
}

// collect waits for the conversations to end (group_timeout after their
// last trace) and their end-of-conversation verdicts to come, stops the
// collector, and keeps its verdicts in the folder.
func (s *session) collect(w io.Writer, r *run) ([]reported, error) {
	var last time.Time
	for _, e := range r.exports {
		if e.at().After(last) {
			last = e.at()
		}
	}
	fmt.Fprintf(w, "waiting for the conversations to end (group_timeout %v) and their verdicts to come\n", s.groupTimeout)
	time.Sleep(time.Until(last.Add(s.groupTimeout + settle)))
	s.sink.WaitQuiet(time.Second, 20*time.Second)
	if err := s.col.Alive(); err != nil {
		return nil, err
	}
	stopping := time.Now()
	s.col.Stop()
	reported := fromRecords(s.sink.Received(), stopping)
	return reported, saveReported(filepath.Join(s.dir, verdictsFile), reported)
}

// passedOn is a problem when the collector passed on another number of
// spans than it took (sent) plus its verdict spans.
func (s *session) passedOn(sent int, reported []reported) []string {
	passed, err := harness.SpansPassedOn(s.col.Log())
	if err != nil {
		return []string{"counting the spans the collector passed on: " + err.Error()}
	}
	if vs := verdictSpans(reported); passed != sent+vs {
		return []string{fmt.Sprintf("the collector passed on %d spans; it took %d and wrote %d verdict spans", passed, sent, vs)}
	}
	return nil
}

// check runs agentguard check on the app's file and reads its verdicts.
func (s *session) check() ([]verdict, error) {
	checkOut := filepath.Join(s.dir, "check.json")
	if err := runCheck(s.config, filepath.Join(s.dir, spansFile), checkOut); err != nil {
		return nil, err
	}
	return fromCheck(checkOut)
}

// conclude judges the collector's verdicts against check's, prints the
// judgement, the delays and the problems, and reports whether the run
// passed.
func (s *session) conclude(w io.Writer, r *run, reported []reported, checked []verdict, problems []string) bool {
	j := judge(r.convs, reported, checked)
	byTrace, byConv := r.exportTimes()
	onEvents, onVerdictSpans := delays(reported, byTrace, byConv)
	printJudgement(w, j, len(reported), len(checked))
	printDelays(w, onEvents, onVerdictSpans)
	for _, p := range problems {
		fmt.Fprintln(w, "PROBLEM:", p)
	}
	ok := j.ok() && len(problems) == 0
	if ok {
		fmt.Fprintln(w, "live: PASS")
	} else {
		fmt.Fprintf(w, "live: FAIL (in %s: the spans %s, the collector's verdicts %s, check's report check.json, the collector's log collector.log)\n",
			s.out, spansFile, verdictsFile)
	}
	return ok
}

// paperKinds are the app's conversations that examples/weather/collector.yaml
// judges: its te1..te3 catch every faulty one. The app's other kinds break
// the rules only guard.yaml adds.
const paperKinds = "strong,self-hello,self-goodbye,keeps-control"

// runApp runs the live app against the collector; its own lines go to stderr.
func (o options) runApp(addr, out string) error {
	cmd := exec.Command("node", "main.js", "--endpoint", "http://"+addr+"/v1/traces", "--out", out,
		"--n", strconv.Itoa(o.n), "--concurrency", strconv.Itoa(o.concurrency), "--pause-ms", strconv.FormatInt(o.pause.Milliseconds(), 10),
		"--kinds", paperKinds)
	cmd.Dir = o.app
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.Env = harness.AppEnv("OTEL_BSP_SCHEDULE_DELAY=" + strconv.FormatInt(o.bspDelay.Milliseconds(), 10))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the live app (%s): %w", o.app, err)
	}
	return nil
}

// runCheck runs agentguard check on the spans file, its JSON report to
// reportPath and its warnings beside it (.stderr). Exit 1 (violations found)
// is a result, not an error.
func runCheck(config, spans, reportPath string) error {
	f, err := os.Create(reportPath)
	if err != nil {
		return err
	}
	defer f.Close()
	var stderr bytes.Buffer
	cmd := exec.Command("go", "run", "./cmd/agentguard", "check", "--config", config, "--format", "json", spans)
	cmd.Stdout, cmd.Stderr = f, &stderr
	err = cmd.Run()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 1 {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("agentguard check: %w\n%s", err, stderr.String())
	}
	return os.WriteFile(strings.TrimSuffix(reportPath, ".json")+".stderr", stderr.Bytes(), 0o644)
}

func verdictSpans(rs []reported) int {
	spans := map[[2]string]bool{}
	for _, r := range rs {
		if r.onSpan == verdictSpan {
			spans[[2]string{r.traceID, r.spanID}] = true
		}
	}
	return len(spans)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
