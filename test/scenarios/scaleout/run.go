package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/test/harness"
	"github.com/agentguard/agentguard/test/sim/weather"
)

// settle is how long past group_timeout the last verdict can take: the
// configuration's wait (2s) bounds when a trace is released, then a tick and
// the exports through the tiers.
const settle = 3 * time.Second

// verdictSpanName is the span temporalcheck writes a verdict decided after
// the group's spans left on.
const verdictSpanName = "agentguard verdict"

func (o options) run(w io.Writer) (bool, error) {
	if err := os.RemoveAll(o.out); err != nil {
		return false, err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return false, err
	}
	// Play once, keep the requests: the same bytes go to the tier and to
	// the single collector, so trace and span IDs agree.
	rec, err := harness.StartTraceSink()
	if err != nil {
		return false, err
	}
	convs := weather.Conversations(o.strong, o.weak, o.keeps, o.seed)
	err = weather.Export(context.Background(), rec.Addr(), convs, o.baggage)
	rec.Close()
	if err != nil {
		return false, err
	}
	reqs := rec.Requests()
	in := spansByTrace(rec.Traces())
	spans := 0
	for _, n := range in {
		spans += n
	}
	fmt.Fprintf(w, "played %d conversations: %d traces, %d spans in %d requests (conversation id on every span: %v)\n",
		len(convs), len(in), spans, len(reqs), o.baggage)
	ok := true
	for _, routing := range o.routings {
		r, err := o.runRouting(w, routing, reqs, in)
		if err != nil {
			return false, fmt.Errorf("%s routing: %w", routing, err)
		}
		ok = ok && r
	}
	if ok {
		fmt.Fprintln(w, "scaleout: PASS")
	} else {
		fmt.Fprintf(w, "scaleout: FAIL (the collectors' logs are in %s)\n", o.out)
	}
	return ok, nil
}

// procs are the collectors of one run, stopped together.
type procs []*harness.Collector

func (ps procs) alive() error {
	var errs []error
	for _, p := range ps {
		errs = append(errs, p.Alive())
	}
	return errors.Join(errs...)
}

func (ps procs) stop() {
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Go(p.Stop)
	}
	wg.Wait()
}

// runRouting runs one routing: the tier and the single collector fed the
// same requests; it reports whether they agreed.
func (o options) runRouting(w io.Writer, routing string, reqs [][]byte, in map[string]int) (bool, error) {
	var routerConfigs []string
	sets := []string{"service::telemetry::metrics::level=none", "service::telemetry::logs::sampling::enabled=false"}
	switch routing {
	case "trace":
		routerConfigs = []string{filepath.Join(o.dir, "router.yaml")}
		sets = append(sets, "processors::temporalcheck::group_by=trace_id")
	case "conversation":
		routerConfigs = []string{filepath.Join(o.dir, "router.yaml"), filepath.Join(o.dir, "router-conversation.yaml")}
	default:
		return false, fmt.Errorf("unknown routing %q: trace or conversation", routing)
	}
	out := filepath.Join(o.out, routing)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return false, err
	}
	singleSink, err := harness.StartLogSink()
	if err != nil {
		return false, err
	}
	defer singleSink.Close()
	tierSink, err := harness.StartLogSink()
	if err != nil {
		return false, err
	}
	defer tierSink.Close()
	kept, err := harness.StartTraceSink()
	if err != nil {
		return false, err
	}
	defer kept.Close()

	addrs, err := harness.FreeAddrs(3 + 2*o.backends)
	if err != nil {
		return false, err
	}
	var running procs
	defer func() { running.stop() }()
	start := func(name string, opt harness.CollectorOptions) error {
		opt.Log = filepath.Join(out, name+".log")
		p, err := harness.StartCollector(opt)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		running = append(running, p)
		return nil
	}

	// The sampler holds each trace until a verdict decided at the end of
	// its conversation can have come (group_timeout after the trace).
	decisionWait := o.groupTimeout + settle + time.Second
	samplerAddr := addrs[0]
	if err := start("sampler", harness.CollectorOptions{Bin: o.router, Configs: []string{filepath.Join(o.dir, "sampler.yaml")},
		Sets: []string{"service::telemetry::metrics::level=none"}, Env: []string{
			"AGENTGUARD_SAMPLER_OTLP_HTTP=" + samplerAddr,
			"AGENTGUARD_SAMPLER_EXPORT=" + kept.Endpoint(),
			"AGENTGUARD_SAMPLER_WAIT=" + decisionWait.String(),
			fmt.Sprintf("AGENTGUARD_SAMPLER_PERCENT=%d", o.samplePercent),
		}}); err != nil {
		return false, err
	}
	agentguardEnv := func(httpAddr string, sink *harness.LogSink) []string {
		return []string{"AGENTGUARD_OTLP_HTTP=" + httpAddr, "AGENTGUARD_VERDICTS_ENDPOINT=http://" + sink.Addr() + "/v1/logs",
			"AGENTGUARD_GROUP_TIMEOUT=" + o.groupTimeout.String(),
			// No collector ran before these: no conversation began elsewhere,
			// and a verdict marked partial by the warm-up on one side only
			// would differ for no fault of the routing.
			"AGENTGUARD_WARM_UP=0s"}
	}
	backendLogs := make([]string, o.backends)
	grpcAddrs := make([]string, o.backends)
	for i := range o.backends {
		httpAddr, grpcAddr := addrs[3+2*i], addrs[4+2*i]
		grpcAddrs[i] = grpcAddr
		name := fmt.Sprintf("agentguard-%d", i+1)
		if err := start(name, harness.CollectorOptions{Bin: o.collector, Configs: []string{o.config, filepath.Join(o.dir, "backend.yaml")},
			Sets: sets, Env: append(agentguardEnv(httpAddr, tierSink),
				"AGENTGUARD_OTLP_GRPC="+grpcAddr, "AGENTGUARD_SAMPLER=http://"+samplerAddr)}); err != nil {
			return false, err
		}
		backendLogs[i] = filepath.Join(out, name+".log")
	}
	singleAddr := addrs[1]
	if err := start("single", harness.CollectorOptions{Bin: o.collector, Configs: []string{o.config}, Sets: sets,
		Env: agentguardEnv(singleAddr, singleSink)}); err != nil {
		return false, err
	}
	routerAddr := addrs[2]
	if err := start("router", harness.CollectorOptions{Bin: o.router, Configs: routerConfigs,
		Sets: []string{"service::telemetry::metrics::level=none"}, Env: []string{
			"AGENTGUARD_ROUTER_OTLP_HTTP=" + routerAddr,
			"AGENTGUARD_BACKENDS=[" + strings.Join(grpcAddrs, ", ") + "]",
		}}); err != nil {
		return false, err
	}

	var wg sync.WaitGroup
	var errRouter, errSingle error
	wg.Go(func() { errRouter = post(routerAddr, reqs) })
	wg.Go(func() { errSingle = post(singleAddr, reqs) })
	wg.Wait()
	if err := errors.Join(errRouter, errSingle, running.alive()); err != nil {
		return false, err
	}
	sent := time.Now()
	// The conversations end group_timeout after their last trace, and their
	// end-of-conversation verdicts come then.
	time.Sleep(time.Until(sent.Add(o.groupTimeout + settle)))
	singleSink.WaitQuiet(time.Second, 20*time.Second)
	tierSink.WaitQuiet(time.Second, 20*time.Second)
	// The sampler decides decision_wait after a trace's first span.
	time.Sleep(time.Until(sent.Add(o.groupTimeout + settle + decisionWait + time.Second)))
	kept.WaitQuiet(time.Second, 20*time.Second)
	if err := running.alive(); err != nil {
		return false, err
	}
	running.stop()
	running = nil

	single, tier := verdictsOf(records(singleSink)), verdictsOf(records(tierSink))
	onlySingle, onlyTier := diffVerdicts(single, tier)
	var problems []string
	for _, v := range onlySingle {
		problems = append(problems, "only the single collector reported "+v.String())
	}
	for _, v := range onlyTier {
		problems = append(problems, "only the tier reported "+v.String())
	}
	if len(single) == 0 {
		problems = append(problems, "no verdict at all: nothing to compare")
	}

	// Every span that entered a collector left it, with the verdict spans.
	var loads []string
	total := 0
	for i, l := range backendLogs {
		n, err := harness.SpansPassedOn(l)
		if err != nil {
			// A backend given nothing logged no batch: the routing put
			// everything elsewhere (as on a key most spans lack).
			n = 0
			problems = append(problems, fmt.Sprintf("agentguard-%d was given no span: the routing did not spread the load", i+1))
		}
		total += n
		loads = append(loads, fmt.Sprintf("%d", n))
	}
	spans := 0
	for _, n := range in {
		spans += n
	}
	if want := spans + verdictSpans(tier); total != want {
		problems = append(problems, fmt.Sprintf("the tier passed on %d spans; it took %d and wrote %d verdict spans", total, spans, verdictSpans(tier)))
	}
	if n, err := harness.SpansPassedOn(filepath.Join(out, "single.log")); err != nil || n != spans+verdictSpans(single) {
		problems = append(problems, fmt.Sprintf("the single collector passed on %d spans (%v); it took %d and wrote %d verdict spans", n, err, spans, verdictSpans(single)))
	}

	s := judgeSampling(in, spansByTrace(kept.Traces()), violatingTraces(tier))
	problems = append(problems, s.problems...)

	fmt.Fprintf(w, "\n%s routing (%s): %d verdicts from the single collector, %d from the tier of %d; spans passed on by each backend: %s\n",
		routing, strings.Join(routerConfigs, " + "), len(single), len(tier), o.backends, strings.Join(loads, "/"))
	fmt.Fprintf(w, "  sampler: kept %d of %d traces with a violation, %d of %d others (%d%%)\n",
		s.violatingKept, s.violating, s.restKept, s.rest, o.samplePercent)
	for _, p := range problems {
		fmt.Fprintln(w, "  PROBLEM:", p)
	}
	if len(problems) == 0 {
		fmt.Fprintf(w, "  the tier's verdicts are the single collector's\n")
	}
	return len(problems) == 0, nil
}

// post sends each request to the OTLP/HTTP receiver at addr, in order, as
// an SDK's exporter does.
func post(addr string, reqs [][]byte) error {
	for i, b := range reqs {
		if _, err := harness.PostTraces(addr, "application/x-protobuf", b); err != nil {
			return fmt.Errorf("request %d to %s: %w", i+1, addr, err)
		}
	}
	return nil
}

func records(s *harness.LogSink) []plog.LogRecord { return s.Records() }

// verdictSpans counts the verdict spans the verdicts were written on.
func verdictSpans(vs []verdict) int {
	seen := map[string]bool{}
	for _, v := range vs {
		if v.SpanName == verdictSpanName {
			seen[v.TraceID+"/"+v.spanID] = true
		}
	}
	return len(seen)
}

// violatingTraces are the traces a violation was reported on.
func violatingTraces(vs []verdict) map[string]bool {
	out := map[string]bool{}
	for _, v := range vs {
		if v.Label == verdictattr.LabelFail {
			out[v.TraceID] = true
		}
	}
	return out
}
