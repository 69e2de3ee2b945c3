// SPDX-License-Identifier: Apache-2.0

// Command demo runs agentguard's demo: it starts the otelcol-agentguard
// distribution on loopback (free ports for OTLP and its own metrics) with the
// two examples' configurations, plays the weather agents' conversations (the
// paper's three-agent system, a strong and a weak profile and a greeting
// agent that keeps control, through the OpenTelemetry SDK as Google ADK
// traces them) and household episodes (the stove scenario, as LangGraph and
// OpenInference trace them), receives the collector's verdict log records on
// a loopback OTLP/HTTP endpoint, prints what it reported (the earliest
// violation of each conversation in full), and stops the collector. A
// collector that exits fails the demo at once, with the collector's error.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/test/harness"
	"github.com/agentguard/agentguard/test/sim/weather"
)

func main() {
	bin := flag.String("collector", "dist/otelcol-agentguard", "the otelcol-agentguard binary")
	weatherConfig := flag.String("weather-config", "examples/weather/collector.yaml", "the weather agents' configuration")
	householdConfig := flag.String("household-config", "examples/household/collector.yaml", "the household agent's configuration")
	strong := flag.Int("strong", 5, "conversations of the strong profile")
	weak := flag.Int("weak", 10, "conversations of the weak profile")
	keeps := flag.Int("keeps-control", 1, "conversations whose greeting agent keeps control")
	seed := flag.Uint64("seed", 16, "random seed of the weak profile's mistakes")
	groupTimeout := flag.Duration("group-timeout", 2*time.Second, "AGENTGUARD_GROUP_TIMEOUT: a conversation ends this long after its last turn (the demo's users do not pause)")
	episodes := flag.Int("episodes", 12, "household episodes")
	householdSeed := flag.Int64("household-seed", 7, "random seed of the household episodes (the model was learned on seed 1)")
	flag.Parse()
	d := demo{strong: *strong, weak: *weak, keeps: *keeps, seed: *seed, groupTimeout: *groupTimeout,
		episodes: *episodes, householdSeed: *householdSeed}
	if err := d.run(*bin, []string{*weatherConfig, *householdConfig}); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// demo is what to play.
type demo struct {
	strong, weak, keeps int
	seed                uint64
	groupTimeout        time.Duration
	episodes            int
	householdSeed       int64
}

// settle is how long after the last span the last verdict can take beyond
// group_timeout: the weather configuration's wait, a tick, the export.
const settle = 3 * time.Second

func (d demo) run(bin string, configs []string) error {
	sink, err := harness.StartLogSink()
	if err != nil {
		return err
	}
	defer sink.Close()
	addrs, err := harness.FreeAddrs(2)
	if err != nil {
		return err
	}
	otlpAddr, metricsAddr := addrs[0], addrs[1]
	telemetry, err := harness.WriteTelemetryConfig(metricsAddr)
	if err != nil {
		return err
	}
	defer os.Remove(telemetry)
	col, err := harness.StartCollector(harness.CollectorOptions{Bin: bin, Configs: append(configs, telemetry), Env: []string{
		"AGENTGUARD_OTLP_HTTP=" + otlpAddr,
		"AGENTGUARD_VERDICTS_ENDPOINT=http://" + sink.Addr() + "/v1/logs",
		"AGENTGUARD_GROUP_TIMEOUT=" + d.groupTimeout.String(),
	}})
	if err != nil {
		return err
	}
	defer col.Stop()
	fmt.Printf("otelcol-agentguard is up: OTLP/HTTP on %s, its metrics on http://%s/metrics, group_timeout %v (log: %s)\n",
		otlpAddr, metricsAddr, d.groupTimeout, col.Log())
	start := time.Now()
	convs := weather.Conversations(d.strong, d.weak, d.keeps, d.seed)
	if err := weather.Export(context.Background(), otlpAddr, convs, true); err != nil {
		return fmt.Errorf("%w%s", err, orExit(col))
	}
	eps := episodes(d.episodes, d.householdSeed, start)
	if err := post(otlpAddr, eps); err != nil {
		return fmt.Errorf("%w%s", err, orExit(col))
	}
	sent := time.Now()
	fmt.Printf("played %d weather conversations (%d strong, %d weak, %d whose greeting agent keeps control) and %d household episodes in %v\n",
		len(convs), d.strong, d.weak, d.keeps, len(eps), sent.Sub(start).Round(time.Millisecond))
	// A conversation's end-of-conversation verdicts come group_timeout after
	// its last turn: wait for them, then for the records to stop.
	fmt.Printf("waiting %v for the conversations to end (group_timeout) and their verdicts to come\n", (d.groupTimeout + settle).Round(time.Second))
	time.Sleep(time.Until(sent.Add(d.groupTimeout + settle)))
	sink.WaitQuiet(time.Second, 20*time.Second)
	if err := col.Alive(); err != nil {
		return err
	}
	temporal, prob := byCheck(sink.Records())
	fmt.Println("\nweather agents (temporalcheck):")
	summarizeWeather(os.Stdout, convs, temporal)
	fmt.Println("\nhousehold agent (probguard):")
	summarizeHousehold(os.Stdout, eps, prob)
	return nil
}

// orExit adds the collector's own error when it has exited.
func orExit(c *harness.Collector) string {
	if err := c.Alive(); err != nil {
		return "\n" + err.Error()
	}
	return ""
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
