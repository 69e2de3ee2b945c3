// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/agentguard/agentguard/test/harness"
)

// stack is what runs: the webhook, Alertmanager, Prometheus, the collector
// and the log sink that receives its verdict records.
type stack struct {
	hook                    *webhook
	sink                    *harness.LogSink
	am, prom                *server
	col                     *harness.Collector
	api                     promAPI
	otlp, verdicts, selfAdr string
	health, telemetry       string
}

// addresses: the collector's OTLP, verdict metrics, self-metrics and
// health; Prometheus; Alertmanager.
const addresses = 6

func startStack(o options) (*stack, error) {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return nil, err
	}
	out, err := filepath.Abs(o.out)
	if err != nil {
		return nil, err
	}
	addrs, err := harness.FreeAddrs(addresses)
	if err != nil {
		return nil, err
	}
	s := &stack{otlp: addrs[0], verdicts: addrs[1], selfAdr: addrs[2], health: addrs[3], api: promAPI{base: "http://" + addrs[4]}}
	if err := s.startServers(o, out, addrs[4], addrs[5]); err != nil {
		s.stop()
		return nil, err
	}
	if err := s.startCollector(o, out); err != nil {
		s.stop()
		return nil, err
	}
	return s, s.waitScraped(30 * time.Second)
}

func (s *stack) startServers(o options, out, promAddr, amAddr string) error {
	var err error
	if s.hook, err = startWebhook(); err != nil {
		return err
	}
	alerting := filepath.Join(o.examples, "alerting")
	amConfig := filepath.Join(out, "alertmanager.yml")
	if err := alertmanagerConfig(filepath.Join(alerting, "alertmanager.yml"), amConfig, s.hook.url(), o.groupWait); err != nil {
		return err
	}
	if err := resetDir(filepath.Join(out, "alertmanager-data")); err != nil {
		return err
	}
	s.am, err = startServer("alertmanager", out, "http://"+amAddr+"/-/ready", o.alertmanager,
		"--config.file="+amConfig, "--storage.path="+filepath.Join(out, "alertmanager-data"),
		"--web.listen-address="+amAddr, "--cluster.listen-address=")
	if err != nil {
		return err
	}
	rules, err := filepath.Abs(filepath.Join(alerting, "rules.yml"))
	if err != nil {
		return err
	}
	promConfig := filepath.Join(out, "prometheus.yml")
	targets := map[string]string{"agentguard": s.verdicts, "agentguard-self": s.selfAdr}
	if err := prometheusConfig(filepath.Join(alerting, "prometheus.yml"), promConfig, rules, amAddr, targets, o.interval); err != nil {
		return err
	}
	if err := resetDir(filepath.Join(out, "prometheus-data")); err != nil {
		return err
	}
	s.prom, err = startServer("prometheus", out, s.api.base+"/-/ready", o.prometheus,
		"--config.file="+promConfig, "--storage.tsdb.path="+filepath.Join(out, "prometheus-data"),
		"--web.listen-address="+promAddr, "--web.external-url="+s.api.base, "--enable-feature=exemplar-storage")
	return err
}

// resetDir empties a server's data directory: each run starts afresh.
func resetDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.MkdirAll(dir, 0o755)
}

func (s *stack) startCollector(o options, out string) error {
	var err error
	if s.sink, err = harness.StartLogSink(); err != nil {
		return err
	}
	if s.telemetry, err = harness.WriteTelemetryConfig(s.selfAdr); err != nil {
		return err
	}
	s.col, err = harness.StartCollector(harness.CollectorOptions{Bin: o.collector, Log: filepath.Join(out, "collector.log"),
		Configs: s.configs(o), Env: s.env(o, s.verdicts)})
	return err
}

func (s *stack) configs(o options) []string {
	return []string{filepath.Join(o.examples, "weather", "collector.yaml"), filepath.Join(o.examples, "household", "collector.yaml"),
		filepath.Join(o.examples, "alerting", "collector.yaml"), s.telemetry}
}

func (s *stack) env(o options, verdicts string) []string {
	return []string{"AGENTGUARD_OTLP_HTTP=" + s.otlp, "AGENTGUARD_VERDICTS_ENDPOINT=" + s.sink.Endpoint(),
		"AGENTGUARD_GROUP_TIMEOUT=" + o.groupTimeout.String(), "AGENTGUARD_PROMETHEUS=" + verdicts,
		"AGENTGUARD_HEALTH=" + s.health, "AGENTGUARD_HOUSEHOLD_MODEL=" + filepath.Join(o.examples, "household", "model.json")}
}

// waitScraped waits until Prometheus has scraped both of the collector's
// endpoints and its health probe answers: the times measured are then the
// verdicts', not the start's.
func (s *stack) waitScraped(limit time.Duration) error {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if n, err := s.api.series(`up{job=~"agentguard|agentguard-self"} == 1`); err == nil && n == 2 && s.healthy() {
			return nil
		}
	}
	return fmt.Errorf("prometheus did not scrape both collector endpoints, or the health probe did not answer, within %v", limit)
}

func (s *stack) healthy() bool {
	resp, err := http.Get("http://" + s.health + "/")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// stop ends what the stack started, in reverse.
func (s *stack) stop() {
	if s.col != nil {
		s.col.Stop()
	}
	if s.sink != nil {
		s.sink.Close()
	}
	if s.telemetry != "" {
		os.Remove(s.telemetry)
	}
	for _, srv := range []*server{s.prom, s.am} {
		if srv != nil {
			srv.stop()
		}
	}
	if s.hook != nil {
		s.hook.srv.Close()
	}
}
