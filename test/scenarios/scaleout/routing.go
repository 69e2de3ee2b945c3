// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentguard/agentguard/test/harness"
)

// routing is one routing's run: the tier (the router, the agentguard
// backends, the sampler after them) and the single collector beside it, fed
// the same requests.
type routing struct {
	options
	name          string
	routerConfigs []string // the router's configuration files, merged in order
	sets          []string // --set on every agentguard collector
	logDir        string   // the collectors' logs
	decisionWait  time.Duration

	singleSink, tierSink *harness.LogSink   // the single collector's verdicts, and the tier's
	kept                 *harness.TraceSink // what the sampler passed on
	running              procs

	// The backends' OTLP addresses (and the spare ones a rescale adds), the
	// sampler's address, and the router: what a rescale needs.
	httpAddrs   []string
	grpcAddrs   []string
	samplerAddr string
	routerProc  *harness.Collector
	spare       int // backends to add in a rescale: their addresses are taken at the start

	// With decisions (the conversation routing): each collector's decisions
	// endpoint, the questions asked, and where the tier's answers differed.
	decisions        bool
	riskSingle       string
	riskTier         []string
	questions        []question
	decisionProblems []string
	decisionsMarked  []string // answers that differ on a group marked out_of_order
}

// newRouting sets a routing up by name: trace or conversation.
func (o options) newRouting(name string) (*routing, error) {
	r := &routing{options: o, name: name, logDir: filepath.Join(o.out, name),
		sets: []string{"service::telemetry::metrics::level=none", "service::telemetry::logs::sampling::enabled=false"},
		// The sampler holds each trace until a verdict decided at the end of
		// its conversation can have come (group_timeout after the trace).
		decisionWait: o.groupTimeout + settle + time.Second}
	switch name {
	case "trace":
		r.routerConfigs = []string{filepath.Join(o.dir, "router.yaml")}
		r.sets = append(r.sets, "processors::temporalcheck::group_by=trace_id")
	case "conversation":
		r.routerConfigs = []string{filepath.Join(o.dir, "router.yaml"), filepath.Join(o.dir, "router-conversation.yaml")}
		r.decisions = true
	default:
		return nil, fmt.Errorf("unknown routing %q: trace or conversation", name)
	}
	return r, os.MkdirAll(r.logDir, 0o755)
}

// runRouting runs one routing: the tier and the single collector fed the
// same requests; it reports whether they agreed.
func (o options) runRouting(w io.Writer, name string, reqs [][]byte, in map[string]int, qs []question) (bool, error) {
	r, err := o.newRouting(name)
	if err != nil {
		return false, err
	}
	r.questions = qs
	defer r.close()
	if err := r.startSinks(); err != nil {
		return false, err
	}
	singleAddr, routerAddr, err := r.startCollectors()
	if err != nil {
		return false, err
	}
	if err := r.play(reqs, singleAddr, routerAddr); err != nil {
		return false, err
	}
	out := r.judge(in)
	r.report(w, out)
	return len(out.problems) == 0, nil
}

// startSinks starts the backends: one for each side's verdicts, one for
// what the sampler keeps.
func (r *routing) startSinks() error {
	var err error
	if r.singleSink, err = harness.StartLogSink(); err != nil {
		return err
	}
	if r.tierSink, err = harness.StartLogSink(); err != nil {
		return err
	}
	r.kept, err = harness.StartTraceSink()
	return err
}

// close stops what is still running, collectors first.
func (r *routing) close() {
	r.running.stop()
	if r.kept != nil {
		r.kept.Close()
	}
	for _, s := range []*harness.LogSink{r.tierSink, r.singleSink} {
		if s != nil {
			s.Close()
		}
	}
}

// start runs one collector, its log in logDir.
func (r *routing) start(name string, opt harness.CollectorOptions) error {
	opt.Log = r.log(name)
	p, err := harness.StartCollector(opt)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	r.running = append(r.running, p)
	return nil
}

func (r *routing) log(name string) string { return filepath.Join(r.logDir, name+".log") }

func backendName(i int) string { return fmt.Sprintf("agentguard-%d", i+1) }

// startCollectors starts the sampler, the tier's backends, the single
// collector and the router on free loopback ports, and returns where the
// requests go: the single collector's address and the router's.
func (r *routing) startCollectors() (singleAddr, routerAddr string, err error) {
	// Every address at once: ports picked in two calls may be the same
	// (the first call's were let go before any collector took them).
	members := r.backends + r.spare
	n := 3 + 2*members
	if r.decisions {
		n += 1 + members
	}
	addrs, err := harness.FreeAddrs(n)
	if err != nil {
		return "", "", err
	}
	samplerAddr, singleAddr, routerAddr := addrs[0], addrs[1], addrs[2]
	r.samplerAddr = samplerAddr
	for i := range members {
		r.httpAddrs = append(r.httpAddrs, addrs[3+2*i])
		r.grpcAddrs = append(r.grpcAddrs, addrs[4+2*i])
	}
	if r.decisions {
		r.riskSingle, r.riskTier = addrs[3+2*members], addrs[4+2*members:]
	}
	if err := r.start("sampler", harness.CollectorOptions{Bin: r.router, Configs: []string{filepath.Join(r.dir, "sampler.yaml")},
		Sets: []string{"service::telemetry::metrics::level=none"}, Env: []string{
			"AGENTGUARD_SAMPLER_OTLP_HTTP=" + samplerAddr,
			"AGENTGUARD_SAMPLER_EXPORT=" + r.kept.Endpoint(),
			"AGENTGUARD_SAMPLER_WAIT=" + r.decisionWait.String(),
			fmt.Sprintf("AGENTGUARD_SAMPLER_PERCENT=%d", r.samplePercent),
		}}); err != nil {
		return "", "", err
	}
	for i := range r.backends {
		if err := r.startBackend(i); err != nil {
			return "", "", err
		}
	}
	configs, env := r.withDecisions([]string{r.config}, r.agentguardEnv(singleAddr, r.singleSink), -1)
	if err := r.start("single", harness.CollectorOptions{Bin: r.collector, Configs: configs, Sets: r.sets, Env: env}); err != nil {
		return "", "", err
	}
	return singleAddr, routerAddr, r.startRouter("router", routerAddr)
}

// startBackend starts backend i of the tier, receiving OTLP/HTTP and
// OTLP/gRPC from the router.
func (r *routing) startBackend(i int) error {
	configs, env := r.withDecisions([]string{r.config, filepath.Join(r.dir, "backend.yaml")}, append(r.agentguardEnv(r.httpAddrs[i], r.tierSink),
		"AGENTGUARD_OTLP_GRPC="+r.grpcAddrs[i], "AGENTGUARD_SAMPLER=http://"+r.samplerAddr), i)
	return r.start(backendName(i), harness.CollectorOptions{Bin: r.collector, Configs: configs, Sets: r.sets, Env: env})
}

// startRouter starts the router on routerAddr, routing to the tier's
// backends as they are now.
func (r *routing) startRouter(name, routerAddr string) error {
	if err := r.start(name, harness.CollectorOptions{Bin: r.router, Configs: r.routerConfigs,
		Sets: []string{"service::telemetry::metrics::level=none"}, Env: []string{
			"AGENTGUARD_ROUTER_OTLP_HTTP=" + routerAddr,
			"AGENTGUARD_BACKENDS=[" + strings.Join(r.grpcAddrs[:r.backends], ", ") + "]",
		}}); err != nil {
		return err
	}
	r.routerProc = r.running[len(r.running)-1]
	return nil
}

// withDecisions adds decisions.yaml and its environment to a collector's:
// backend i of the tier (its peers the others), or the single one (-1).
func (r *routing) withDecisions(configs, env []string, i int) ([]string, []string) {
	if !r.decisions {
		return configs, env
	}
	own, peers := r.riskSingle, []string{}
	if i >= 0 {
		// Its peers are the backends running with it (a backend added in a
		// rescale knows those before it).
		own = r.riskTier[i]
		for j, a := range r.riskTier[:r.backends] {
			if j != i {
				peers = append(peers, "http://"+a)
			}
		}
	}
	return append(configs, filepath.Join(r.dir, "decisions.yaml")), append(env, "AGENTGUARD_RISK_ENDPOINT="+own,
		"AGENTGUARD_PEERS=["+strings.Join(peers, ", ")+"]", "AGENTGUARD_MAX_WAIT=3s")
}

// agentguardEnv is the environment of an agentguard collector receiving on
// httpAddr and sending its verdicts to sink.
func (r *routing) agentguardEnv(httpAddr string, sink *harness.LogSink) []string {
	return []string{"AGENTGUARD_OTLP_HTTP=" + httpAddr, "AGENTGUARD_VERDICTS_ENDPOINT=" + sink.Endpoint(),
		"AGENTGUARD_GROUP_TIMEOUT=" + r.groupTimeout.String()}
}

// play sends the requests to the router and to the single collector at
// once, waits for the conversations to end, their verdicts to come and the
// sampler to decide, and stops the collectors.
func (r *routing) play(reqs [][]byte, singleAddr, routerAddr string) error {
	var wg sync.WaitGroup
	var errRouter, errSingle error
	wg.Go(func() { errRouter = post(routerAddr, reqs) })
	wg.Go(func() { errSingle = post(singleAddr, reqs) })
	wg.Wait()
	if err := errors.Join(errRouter, errSingle, r.running.alive()); err != nil {
		return err
	}
	if r.decisions {
		// As hooks ask: after each conversation's last span, before it ends.
		r.decisionProblems, r.decisionsMarked = askAll(r.riskSingle, r.riskTier, r.questions)
	}
	return r.finish()
}

// outcome is one routing's run judged.
type outcome struct {
	single, tier []verdict
	loads        []string // the spans each backend passed on
	sampling     sampling
	problems     []string
	marked       []string // differences on groups a side marked (see verdictProblems)
}

// judge compares the tier's verdicts with the single collector's, counts
// the spans each passed on, and judges what the sampler kept.
func (r *routing) judge(in map[string]int) outcome {
	out := outcome{single: verdictsOf(r.singleSink.Records()), tier: verdictsOf(r.tierSink.Records())}
	out.problems, out.marked = verdictProblems(out.single, out.tier)
	var spanProblems []string
	out.loads, spanProblems = r.passedOn(total(in), out.single, out.tier)
	out.problems = append(out.problems, spanProblems...)
	out.sampling = judgeSampling(in, spansByTrace(r.kept.Traces()), violatingTraces(out.tier))
	out.problems = append(out.problems, out.sampling.problems...)
	out.problems = append(out.problems, r.decisionProblems...)
	out.marked = append(out.marked, r.decisionsMarked...)
	return out
}

// passedOn checks that every span that entered a collector left it, with
// the verdict spans, and returns the spans each backend passed on.
func (r *routing) passedOn(spans int, single, tier []verdict) (loads, problems []string) {
	sum := 0
	for i := range r.backends {
		n, err := harness.SpansPassedOn(r.log(backendName(i)))
		if err != nil {
			// A backend given nothing logged no batch: the routing put
			// everything elsewhere (as on a key most spans lack).
			n = 0
			problems = append(problems, fmt.Sprintf("%s was given no span: the routing did not spread the load", backendName(i)))
		}
		sum += n
		loads = append(loads, fmt.Sprintf("%d", n))
	}
	if want := spans + verdictSpans(tier); sum != want {
		problems = append(problems, fmt.Sprintf("the tier passed on %d spans; it took %d and wrote %d verdict spans", sum, spans, verdictSpans(tier)))
	}
	if n, err := harness.SpansPassedOn(r.log("single")); err != nil || n != spans+verdictSpans(single) {
		problems = append(problems, fmt.Sprintf("the single collector passed on %d spans (%v); it took %d and wrote %d verdict spans", n, err, spans, verdictSpans(single)))
	}
	return loads, problems
}

// report prints what the routing's run reported and its problems.
func (r *routing) report(w io.Writer, out outcome) {
	fmt.Fprintf(w, "\n%s routing (%s): %d verdicts from the single collector, %d from the tier of %d; spans passed on by each backend: %s\n",
		r.name, strings.Join(r.routerConfigs, " + "), len(out.single), len(out.tier), r.backends, strings.Join(out.loads, "/"))
	s := out.sampling
	fmt.Fprintf(w, "  sampler: kept %d of %d traces with a violation, %d of %d others (%d%%)\n",
		s.violatingKept, s.violating, s.restKept, s.rest, r.samplePercent)
	if r.decisions {
		fmt.Fprintf(w, "  decisions: %d conversations asked of one collector of the tier each (round robin) and of the single collector, after their last span: %d answers differ (%d more on a group marked out_of_order)\n",
			len(r.questions), len(r.decisionProblems), len(r.decisionsMarked))
	}
	for _, m := range out.marked {
		fmt.Fprintln(w, "  marked, so not a problem:", m)
	}
	for _, p := range out.problems {
		fmt.Fprintln(w, "  PROBLEM:", p)
	}
	if len(out.problems) == 0 {
		fmt.Fprintf(w, "  the tier's verdicts are the single collector's\n")
	}
}
