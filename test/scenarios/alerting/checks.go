// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"

	"github.com/agentguard/agentguard/test/harness"
	"github.com/agentguard/agentguard/test/sim/household"
)

// checkQueries runs every expression of the dashboard against Prometheus:
// each must return data; and no metric name of the dashboard or the rules
// may be one neither Prometheus nor a component knows (a typo).
func (s *stack) checkQueries(o options) error {
	alerting := filepath.Join(o.examples, "alerting")
	exprs, err := dashboardExprs(filepath.Join(alerting, "dashboard.json"))
	if err != nil {
		return err
	}
	for _, e := range exprs {
		n, err := s.api.series(e)
		if err != nil {
			return fmt.Errorf("dashboard query %q: %w", e, err)
		}
		if n == 0 {
			return fmt.Errorf("dashboard query %q returns no data", e)
		}
	}
	ruleExprs, err := rulesExprs(filepath.Join(alerting, "rules.yml"))
	if err != nil {
		return err
	}
	known, err := s.api.names()
	if err != nil {
		return err
	}
	documented, err := documentedNames(".")
	if err != nil {
		return err
	}
	if bad := unknownNames(append(exprs, ruleExprs...), append(known, documented...)); len(bad) > 0 {
		return fmt.Errorf("metric names neither in Prometheus nor documented by a component: %v", bad)
	}
	fmt.Printf("dashboard: %d queries, each returned data; rules: %d expressions, every metric name known\n", len(exprs), len(ruleExprs))
	return nil
}

func rulesExprs(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Expr string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	var out []string
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			out = append(out, r.Expr)
		}
	}
	return out, nil
}

// checkPortTaken starts a second collector whose prometheus exporter's
// port is the first's: it must fail at start, in the collector's own words.
func (s *stack) checkPortTaken(o options) error {
	addrs, err := harness.FreeAddrs(3)
	if err != nil {
		return err
	}
	second := &stack{otlp: addrs[0], health: addrs[1], sink: s.sink}
	if second.telemetry, err = harness.WriteTelemetryConfig(addrs[2]); err != nil {
		return err
	}
	defer os.Remove(second.telemetry)
	col, err := harness.StartCollector(harness.CollectorOptions{Bin: o.collector, Log: filepath.Join(o.out, "collector-port-taken.log"),
		Configs: second.configs(o), Env: second.env(o, s.verdicts)})
	if err == nil {
		col.Stop()
		return errors.New("a collector whose prometheus exporter's port was taken started")
	}
	if !strings.Contains(err.Error(), "address already in use") {
		return fmt.Errorf("a collector whose exporter's port was taken failed, but not saying so: %w", err)
	}
	fmt.Printf("exporter's port taken: the collector does not start:\n  %s\n", firstLine(err))
	return nil
}

func firstLine(err error) string {
	lines := strings.Split(err.Error(), "\n")
	for _, l := range lines {
		if strings.Contains(l, "address already in use") {
			return strings.TrimSpace(l)
		}
	}
	return lines[0]
}

// loadEpisodes are the household episodes sent at once for the load.
const loadEpisodes = 400

// checkScrapeUnderLoad sends household episodes from four senders at once
// and scrapes both metrics endpoints meanwhile: every scrape must answer.
func (s *stack) checkScrapeUnderLoad() error {
	bodies, err := episodeBodies(loadEpisodes)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	sendErrs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(bodies); i += 4 {
				if _, err := harness.PostTraces(s.otlp, "application/json", bodies[i]); err != nil {
					sendErrs <- err
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	scrapes, slowest, err := s.scrapeUntil(done)
	close(sendErrs)
	if err != nil {
		return err
	}
	if err := <-sendErrs; err != nil {
		return fmt.Errorf("sending the load: %w", err)
	}
	fmt.Printf("under load (%d episodes from 4 senders): %d scrapes, every one answered, the slowest in %v\n", loadEpisodes, scrapes, slowest.Round(time.Millisecond))
	return nil
}

func episodeBodies(n int) ([][]byte, error) {
	var out [][]byte
	for _, ep := range household.Generate(household.Options{Seed: householdSeed + 1, Start: time.Now()}, n) {
		b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(ep.Traces)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// scrapeUntil scrapes both metrics endpoints every 50ms until done, each
// scrape within 5s.
func (s *stack) scrapeUntil(done chan struct{}) (int, time.Duration, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	n, slowest := 0, time.Duration(0)
	for {
		for _, addr := range []string{s.verdicts, s.selfAdr} {
			start := time.Now()
			resp, err := client.Get("http://" + addr + "/metrics")
			if err != nil {
				return n, slowest, fmt.Errorf("a scrape of %s under load: %w", addr, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return n, slowest, fmt.Errorf("a scrape of %s under load: %s", addr, resp.Status)
			}
			n, slowest = n+1, max(slowest, time.Since(start))
		}
		select {
		case <-done:
			return n, slowest, nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}
