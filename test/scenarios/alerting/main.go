// SPDX-License-Identifier: Apache-2.0

// Command alerting runs agentguard's alerting end to end, on real servers:
// Prometheus and Alertmanager (from Debian; make alerting installs them)
// with examples/alerting's configurations, rules and dashboard, and the built
// otelcol-agentguard with the weather, household and alerting
// configurations, all on loopback. It plays a weather conversation whose
// greeting agent keeps control (te1 fails when it ends) and a household
// episode that becomes unsafe (probguard warns), and requires the webhook
// Alertmanager pages to receive both alerts, naming the assertion and the
// service, with a trace link that leads to the offending span, within the
// bound it prints. Then every PromQL expression of the dashboard must return
// data, a second collector on the taken exporter port must fail at start
// with the collector's own error, and the metrics endpoints must answer
// while the collector is loaded.
//
//	make alerting
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	var o options
	flag.StringVar(&o.collector, "collector", "dist/otelcol-agentguard", "the otelcol-agentguard binary")
	flag.StringVar(&o.prometheus, "prometheus", "prometheus", "the Prometheus binary")
	flag.StringVar(&o.alertmanager, "alertmanager", "prometheus-alertmanager", "the Alertmanager binary")
	flag.StringVar(&o.examples, "examples", "examples", "the examples directory")
	flag.StringVar(&o.out, "out", "dist/alerting", "where the servers' configurations, data and logs go")
	flag.DurationVar(&o.interval, "interval", time.Second, "Prometheus's scrape and evaluation interval")
	flag.DurationVar(&o.groupWait, "group-wait", time.Second, "Alertmanager's group_wait")
	flag.DurationVar(&o.groupTimeout, "group-timeout", 2*time.Second, "AGENTGUARD_GROUP_TIMEOUT: a conversation ends this long after its last turn")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "alerting:", err)
		os.Exit(1)
	}
}

// options are what to run and how fast.
type options struct {
	collector, prometheus, alertmanager, examples, out string
	interval, groupWait, groupTimeout                  time.Duration
}

// margin is what the bound allows beyond its parts: process scheduling on
// a loaded two-core machine, the HTTP hops.
const margin = 2 * time.Second

// temporalVerdictDelay is how long after a conversation's last span te1's
// end-of-conversation failure can take: group_timeout, then the weather
// configuration's wait (2s) and a tick of its clock (125ms).
func (o options) temporalVerdictDelay() time.Duration {
	return o.groupTimeout + 2*time.Second + 125*time.Millisecond
}

// bound is the longest an alert may take from its offending span: the
// verdict's own delay, a scrape, an evaluation, Alertmanager's group_wait,
// and the margin.
func (o options) bound(verdictDelay time.Duration) time.Duration {
	return verdictDelay + o.interval + o.interval + o.groupWait + margin
}

func run(o options) error {
	s, err := startStack(o)
	if err != nil {
		return err
	}
	defer s.stop()
	results, err := s.playAndWait(o)
	printTimes(results)
	if err != nil {
		return err
	}
	if err := s.checkQueries(o); err != nil {
		return err
	}
	if err := s.checkPortTaken(o); err != nil {
		return err
	}
	if err := s.checkScrapeUnderLoad(); err != nil {
		return err
	}
	fmt.Println("alerting: PASS")
	return nil
}

// printTimes prints the table of docs/alerting.md.
func printTimes(results []result) {
	fmt.Println("\n| alert | assertion | service | offending span sent → webhook | bound |")
	fmt.Println("|---|---|---|---|---|")
	for _, r := range results {
		fmt.Printf("| %s | %s | %s | %.2f s | %.2f s |\n", r.alert, r.assertion, r.service, r.took.Seconds(), r.bound.Seconds())
	}
	fmt.Println()
}
