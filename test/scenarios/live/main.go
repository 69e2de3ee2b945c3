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
	out, err := filepath.Abs(o.out)
	if err != nil {
		return false, err
	}
	if err := os.RemoveAll(out); err != nil {
		return false, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return false, err
	}
	sink, err := harness.StartLogSink()
	if err != nil {
		return false, err
	}
	defer sink.Close()
	addrs, err := harness.FreeAddrs(1)
	if err != nil {
		return false, err
	}
	addr := addrs[0]
	// Its own metrics off (their default port may be held), its log
	// unsampled (the debug exporter's line for every batch is counted).
	col, err := harness.StartCollector(harness.CollectorOptions{Bin: o.collector, Configs: []string{o.config},
		Sets: []string{"service::telemetry::metrics::level=none", "service::telemetry::logs::sampling::enabled=false"},
		Log:  filepath.Join(out, "collector.log"), Env: []string{
			"AGENTGUARD_OTLP_HTTP=" + addr,
			"AGENTGUARD_VERDICTS_ENDPOINT=http://" + sink.Addr() + "/v1/logs",
			"AGENTGUARD_GROUP_TIMEOUT=" + o.groupTimeout.String(),
		}})
	if err != nil {
		return false, err
	}
	defer col.Stop()
	fmt.Fprintf(w, "otelcol-agentguard on %s (%s, group_timeout %v); the app's OTEL_BSP_SCHEDULE_DELAY %v; files in %s\n",
		addr, o.config, o.groupTimeout, o.bspDelay, o.out)

	// An app that failed may still have played and exported most: judge
	// what it did, and fail the run.
	appErr := o.runApp(addr, out)
	if err := col.Alive(); err != nil {
		return false, err
	}
	r, err := readRun(out)
	if err != nil {
		return false, errors.Join(appErr, err)
	}
	problems := r.problems()
	if appErr != nil {
		problems = append([]string{appErr.Error() + " (its own lines above)"}, problems...)
	}
	sent := r.sentSpans()
	same, misordered, calls := r.ties()
	fmt.Fprintf(w, "the app exported %d spans of %d conversations in %s; the file holds %d spans\n",
		len(sent), len(r.convs), plural(len(r.exports), "request"), len(r.fileSpans))
	fmt.Fprintf(w, "of the %d tool calls, %d started in the same millisecond as another of their conversation's; end times would misplace %d\n",
		calls, same, misordered)

	// The conversations end group_timeout after their last trace; their
	// end-of-conversation verdicts come then.
	var last time.Time
	for _, e := range r.exports {
		if e.at().After(last) {
			last = e.at()
		}
	}
	fmt.Fprintf(w, "waiting for the conversations to end (group_timeout %v) and their verdicts to come\n", o.groupTimeout)
	time.Sleep(time.Until(last.Add(o.groupTimeout + settle)))
	sink.WaitQuiet(time.Second, 20*time.Second)
	if err := col.Alive(); err != nil {
		return false, err
	}
	stopping := time.Now()
	col.Stop()
	reported := fromRecords(sink.Received(), stopping)
	if err := saveReported(filepath.Join(out, verdictsFile), reported); err != nil {
		return false, err
	}
	if passed, err := harness.SpansPassedOn(col.Log()); err != nil {
		problems = append(problems, "counting the spans the collector passed on: "+err.Error())
	} else if vs := verdictSpans(reported); passed != len(sent)+vs {
		problems = append(problems, fmt.Sprintf("the collector passed on %d spans; it took %d and wrote %d verdict spans", passed, len(sent), vs))
	}

	checkOut := filepath.Join(out, "check.json")
	if err := runCheck(o.config, filepath.Join(out, spansFile), checkOut); err != nil {
		return false, err
	}
	checked, err := fromCheck(checkOut)
	if err != nil {
		return false, err
	}
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
			o.out, spansFile, verdictsFile)
	}
	return ok, nil
}

// runApp runs the live app against the collector; its own lines go to stderr.
func (o options) runApp(addr, out string) error {
	cmd := exec.Command("node", "main.js", "--endpoint", "http://"+addr+"/v1/traces", "--out", out,
		"--n", strconv.Itoa(o.n), "--concurrency", strconv.Itoa(o.concurrency), "--pause-ms", strconv.FormatInt(o.pause.Milliseconds(), 10))
	cmd.Dir = o.app
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	for _, kv := range os.Environ() {
		// The app sends to the collector given; an inherited OTLP endpoint
		// would make ADK export the spans a second time, elsewhere.
		if !strings.HasPrefix(kv, "OTEL_EXPORTER_OTLP_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "OTEL_BSP_SCHEDULE_DELAY="+strconv.FormatInt(o.bspDelay.Milliseconds(), 10))
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
