// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

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
	qs := lastSpans(rec.Traces())
	fmt.Fprintf(w, "played %d conversations: %d traces, %d spans in %d requests (conversation id on every span: %v)\n",
		len(convs), len(in), total(in), len(reqs), o.baggage)
	ok := true
	for _, routing := range o.routings {
		var r bool
		var err error
		if routing == "rescale" {
			r, err = o.runRescale(w, rec.Traces(), in)
		} else {
			r, err = o.runRouting(w, routing, reqs, in, qs)
		}
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

// total adds up the spans of every trace.
func total(spansByTrace map[string]int) int {
	n := 0
	for _, k := range spansByTrace {
		n += k
	}
	return n
}
