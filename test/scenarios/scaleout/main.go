// SPDX-License-Identifier: Apache-2.0

// Command scaleout tests agentguard scaled out on loopback: a router
// (otelcol-agentguard-router: OTLP in, the load-balancing exporter out),
// a tier of agentguard collectors behind it, and a sampler after them (the
// same router binary, tail_sampling on agentguard.violation). It plays the
// weather agents' conversations once through the OpenTelemetry SDK (the
// conversation id copied from baggage onto every span, as docs/scaling.md
// says an application does), records the export requests, and
// sends the same bytes to the router and to one collector alone.
//
// For each routing it checks that the tier reported exactly the single
// collector's verdicts (down to the trace, the span and the explanation;
// on a group either side marked out_of_order, arrival having raced, a
// difference is listed, not failed), that every span that entered a collector left it, and that the sampler
// kept every trace with a violation whole and a sample of the rest. Routings:
// trace (per-trace groups, routing_key traceID) and conversation
// (conversation groups, routing_key attributes on gen_ai.conversation.id);
// and rescale (the conversation routing, its tier grown by one backend
// halfway through the conversations: the moved ones must be handed over).
// It prints what each backend carried and exits 1 on any difference.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	var o options
	flag.StringVar(&o.collector, "collector", "dist/otelcol-agentguard", "the otelcol-agentguard binary (make dist)")
	flag.StringVar(&o.router, "router", "dist/router/otelcol-agentguard-router", "the router and sampler binary (make router)")
	flag.StringVar(&o.config, "config", "examples/weather/collector.yaml", "the agentguard configuration")
	flag.StringVar(&o.dir, "dir", "examples/scaleout", "the folder of router.yaml, router-conversation.yaml, backend.yaml and sampler.yaml")
	flag.StringVar(&o.out, "out", "dist/scaleout", "where the collectors' logs are kept (emptied first)")
	flag.IntVar(&o.backends, "backends", 3, "agentguard collectors in the tier")
	flag.IntVar(&o.strong, "strong", 20, "conversations of the strong profile")
	flag.IntVar(&o.weak, "weak", 40, "conversations of the weak profile (about 3 in 10 go wrong)")
	flag.IntVar(&o.keeps, "keeps-control", 4, "conversations whose greeting agent keeps control")
	flag.Uint64Var(&o.seed, "seed", 13, "random seed of the weak profile's mistakes")
	flag.BoolVar(&o.baggage, "baggage", true, "copy the conversation id from baggage onto every span (false: on invoke_agent spans only, as ADK alone does)")
	flag.DurationVar(&o.groupTimeout, "group-timeout", 2*time.Second, "AGENTGUARD_GROUP_TIMEOUT: a conversation ends this long after its last trace")
	flag.IntVar(&o.samplePercent, "sample-percent", 25, "the share of traces without a violation the sampler keeps")
	routings := flag.String("routing", "trace,conversation,rescale", "the routings to test, comma-separated: trace, conversation, rescale (conversation, the tier grown by one backend halfway)")
	flag.Parse()
	o.routings = strings.Split(*routings, ",")
	ok, err := o.run(os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scaleout:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

type options struct {
	collector, router, config, dir, out string
	backends, strong, weak, keeps       int
	seed                                uint64
	baggage                             bool
	groupTimeout                        time.Duration
	samplePercent                       int
	routings                            []string
}
