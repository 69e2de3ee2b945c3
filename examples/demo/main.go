// Command demo runs agentguard's demo: it starts the otelcol-agentguard
// distribution on loopback with the two examples' configurations, plays the
// weather agents' conversations (the paper's three-agent system, a strong and
// a weak profile, through the OpenTelemetry SDK as Google ADK traces them) and
// household episodes (the stove scenario, as LangGraph and OpenInference
// trace them), receives the collector's verdict log records on a loopback
// OTLP/HTTP endpoint, prints what it reported, and stops the collector.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentguard/agentguard/internal/logsink"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

func main() {
	bin := flag.String("collector", "dist/otelcol-agentguard", "the otelcol-agentguard binary")
	weatherConfig := flag.String("weather-config", "examples/weather-agents/collector.yaml", "the weather agents' configuration")
	householdConfig := flag.String("household-config", "examples/household/collector.yaml", "the household agent's configuration")
	strong := flag.Int("strong", 5, "conversations of the strong profile")
	weak := flag.Int("weak", 10, "conversations of the weak profile")
	seed := flag.Uint64("seed", 16, "random seed of the weak profile's mistakes")
	episodes := flag.Int("episodes", 12, "household episodes")
	householdSeed := flag.Int64("household-seed", 7, "random seed of the household episodes (the model was learned on seed 1)")
	flag.Parse()
	d := demo{strong: *strong, weak: *weak, seed: *seed, episodes: *episodes, householdSeed: *householdSeed}
	if err := d.run(*bin, []string{*weatherConfig, *householdConfig}); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// demo is what to play.
type demo struct {
	strong, weak  int
	seed          uint64
	episodes      int
	householdSeed int64
}

func (d demo) run(bin string, configs []string) error {
	sink, err := logsink.Start()
	if err != nil {
		return err
	}
	defer sink.Close()
	otlpAddr, err := freeAddr()
	if err != nil {
		return err
	}
	collector, err := startCollector(bin, configs, otlpAddr, sink.Addr())
	if err != nil {
		return err
	}
	defer stopCollector(collector)
	start := time.Now()
	convs := conversations(d.strong, d.weak, d.seed)
	if err := play(otlpAddr, convs); err != nil {
		return err
	}
	eps := episodes(d.episodes, d.householdSeed, start)
	if err := post(otlpAddr, eps); err != nil {
		return err
	}
	sink.WaitQuiet(1500*time.Millisecond, 20*time.Second)
	fmt.Printf("played %d weather conversations (%d strong, %d weak) and %d household episodes in %v\n",
		len(convs), d.strong, d.weak, len(eps), time.Since(start).Round(time.Millisecond))
	weather, household := byCheck(sink.Records())
	fmt.Println("\nweather agents (temporalcheck):")
	summarizeWeather(os.Stdout, convs, weather)
	fmt.Println("\nhousehold agent (probguard):")
	summarizeHousehold(os.Stdout, eps, household)
	return nil
}

// byCheck splits the verdict records by the check that wrote them.
func byCheck(recs []plog.LogRecord) (temporal, prob []plog.LogRecord) {
	for _, r := range recs {
		if c, _ := r.Attributes().Get(verdictattr.Check); c.Str() == verdictattr.CheckProb {
			prob = append(prob, r)
		} else {
			temporal = append(temporal, r)
		}
	}
	return temporal, prob
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func startCollector(bin string, configs []string, otlpAddr, sinkAddr string) (*exec.Cmd, error) {
	var args []string
	for _, c := range configs {
		args = append(args, "--config", c)
	}
	cmd := exec.Command(bin, args...)
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
