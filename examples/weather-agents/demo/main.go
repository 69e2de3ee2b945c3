// Command demo runs the weather agents demo: it starts the otelcol-agentguard
// distribution on loopback with ../collector.yaml, plays conversations of the
// paper's three-agent system (a strong and a weak profile) through the
// OpenTelemetry SDK as Google ADK traces them, receives the collector's
// verdict log records on a loopback OTLP/HTTP endpoint, prints a summary, and
// stops the collector.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"

	"github.com/agentguard/agentguard/examples/weather-agents/logsink"
	"github.com/agentguard/agentguard/examples/weather-agents/sim"
)

func main() {
	bin := flag.String("collector", "dist/otelcol-agentguard", "the otelcol-agentguard binary")
	config := flag.String("config", "examples/weather-agents/collector.yaml", "its configuration")
	strong := flag.Int("strong", 5, "conversations of the strong profile")
	weak := flag.Int("weak", 10, "conversations of the weak profile")
	seed := flag.Uint64("seed", 16, "random seed of the weak profile's mistakes")
	flag.Parse()
	if err := run(*bin, *config, *strong, *weak, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(bin, config string, strong, weak int, seed uint64) error {
	sink, err := logsink.Start()
	if err != nil {
		return err
	}
	defer sink.Close()
	sinkAddr := sink.Addr()
	otlpAddr, err := freeAddr()
	if err != nil {
		return err
	}
	collector, err := startCollector(bin, config, otlpAddr, sinkAddr)
	if err != nil {
		return err
	}
	defer stopCollector(collector)
	convs := conversations(strong, weak, seed)
	start := time.Now()
	if err := play(otlpAddr, convs); err != nil {
		return err
	}
	sink.WaitQuiet(1500*time.Millisecond, 20*time.Second)
	fmt.Printf("played %d conversations (%d strong, %d weak) in %v\n\n", len(convs), strong, weak, time.Since(start).Round(time.Millisecond))
	summarize(os.Stdout, convs, sink.Records())
	return nil
}

func conversations(strong, weak int, seed uint64) []sim.Conversation {
	r := rand.New(rand.NewPCG(seed, seed))
	var out []sim.Conversation
	for i := range strong {
		out = append(out, sim.NewConversation(fmt.Sprintf("strong-%02d", i+1), sim.Strong, r))
	}
	for i := range weak {
		out = append(out, sim.NewConversation(fmt.Sprintf("weak-%02d", i+1), sim.Weak, r))
	}
	return out
}

// play sends the conversations' traces with the OpenTelemetry SDK over
// OTLP/HTTP, as an instrumented agent would.
func play(addr string, convs []sim.Conversation) error {
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(addr), otlptracehttp.WithInsecure())
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("weather_agent_team"))))
	base := time.Now()
	for i, c := range convs {
		c.Play(ctx, tp, base.Add(time.Duration(i)*time.Second))
	}
	return tp.Shutdown(ctx)
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func startCollector(bin, config, otlpAddr, sinkAddr string) (*exec.Cmd, error) {
	cmd := exec.Command(bin, "--config", config)
	cmd.Env = append(os.Environ(), "AGENTGUARD_OTLP_HTTP="+otlpAddr,
		"AGENTGUARD_VERDICTS_ENDPOINT=http://"+sinkAddr+"/v1/logs")
	log, err := os.CreateTemp("", "otelcol-agentguard-*.log")
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w (run `make dist` first)", bin, err)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", otlpAddr); err == nil {
			c.Close()
			fmt.Printf("otelcol-agentguard is up on %s (log: %s)\n", otlpAddr, log.Name())
			return cmd, nil
		}
	}
	stopCollector(cmd)
	return nil, fmt.Errorf("the collector did not listen on %s within 30s; see %s", otlpAddr, log.Name())
}

func stopCollector(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
	}
}

// summarize prints, per conversation, what went wrong and what the collector
// reported, then the first violation in full.
func summarize(w io.Writer, convs []sim.Conversation, recs []plog.LogRecord) {
	byGroup := map[string][]plog.LogRecord{}
	for _, r := range recs {
		g, _ := r.Attributes().Get("agentguard.group")
		byGroup[g.Str()] = append(byGroup[g.Str()], r)
	}
	caught, missed, falseAlarms := 0, 0, 0
	for _, c := range convs {
		names := assertionNames(byGroup[c.ID])
		mistake := "behaved"
		switch {
		case c.BadHello:
			mistake = "greeting agent kept control"
		case c.BadGoodbye:
			mistake = "farewell agent kept control"
		}
		fmt.Fprintf(w, "  %-9s %-28s violations: %s\n", c.ID, mistake, orNone(names))
		switch {
		case c.Faulty() && len(names) > 0:
			caught++
		case c.Faulty():
			missed++
		case len(names) > 0:
			falseAlarms++
		}
	}
	fmt.Fprintf(w, "\n%d verdict log records; faulty conversations caught: %d, missed: %d; false alarms: %d\n", len(recs), caught, missed, falseAlarms)
	if len(recs) > 0 {
		fmt.Fprintf(w, "\nfirst violation, as the log record's body says:\n%s", indent(recs[0].Body().Str()))
	}
}

func assertionNames(recs []plog.LogRecord) []string {
	var names []string
	for _, r := range recs {
		n, _ := r.Attributes().Get("gen_ai.evaluation.name")
		s, _ := r.Attributes().Get("agentguard.start_event")
		e, _ := r.Attributes().Get("agentguard.end_event")
		names = append(names, fmt.Sprintf("%s (events %d-%d)", n.Str(), s.Int(), e.Int()))
	}
	sort.Strings(names)
	return names
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}
