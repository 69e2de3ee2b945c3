// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/test/harness"
)

// A rescale: the conversation routing's tier grows by one backend halfway
// through the conversations. Each conversation's turns are sent one
// request a turn, every conversation's first turn, then every second one,
// and so on; after half the rounds a new backend starts (its peers the
// others) and the router restarts with it among its backends, which moves
// about one conversation in four to it in mid-course. The moved
// conversations must be handed over: the tier's verdicts must be the
// single collector's, which saw every turn.

// rescaleGroupTimeout keeps the conversations open through the rescale (a
// backend and the router starting), so that no end-of-conversation verdict
// depends on how long that took.
const rescaleGroupTimeout = 8 * time.Second

func (o options) runRescale(w io.Writer, recorded []ptrace.Traces, in map[string]int) (bool, error) {
	o.groupTimeout = max(o.groupTimeout, rescaleGroupTimeout)
	r, err := o.newRouting("conversation")
	if err != nil {
		return false, err
	}
	r.name, r.logDir, r.spare = "rescale", filepath.Join(o.out, "rescale"), 1
	if err := os.MkdirAll(r.logDir, 0o755); err != nil {
		return false, err
	}
	rounds, err := turnRounds(recorded)
	if err != nil {
		return false, err
	}
	defer r.close()
	if err := r.startSinks(); err != nil {
		return false, err
	}
	singleAddr, routerAddr, err := r.startCollectors()
	if err != nil {
		return false, err
	}
	half := len(rounds) / 2
	if err := sendRounds(rounds[:half], singleAddr, routerAddr); err != nil {
		return false, err
	}
	if err := r.grow(routerAddr); err != nil {
		return false, err
	}
	if err := sendRounds(rounds[half:], singleAddr, routerAddr); err != nil {
		return false, err
	}
	if err := r.finish(); err != nil {
		return false, err
	}
	out := r.judge(in)
	r.report(w, out)
	fmt.Fprintf(w, "  rescale: %d rounds of turns, the tier grown from %d to %d backends after round %d\n", len(rounds), r.backends-r.spare, r.backends, half)
	return len(out.problems) == 0, nil
}

// grow starts the spare backend and restarts the router with it among its
// backends, on the same address.
func (r *routing) grow(routerAddr string) error {
	r.routerProc.Stop()
	r.running = slices.DeleteFunc(r.running, func(p *harness.Collector) bool { return p == r.routerProc })
	r.backends++
	if err := r.startBackend(r.backends - 1); err != nil {
		return err
	}
	return r.startRouter("router-rescaled", routerAddr)
}

// finish waits for the conversations to end and their verdicts to come,
// and for the sampler to decide, and stops the collectors.
func (r *routing) finish() error {
	sent := time.Now()
	// The conversations end group_timeout after their last trace, and their
	// end-of-conversation verdicts come then.
	time.Sleep(time.Until(sent.Add(r.groupTimeout + settle)))
	r.singleSink.WaitQuiet(time.Second, 20*time.Second)
	r.tierSink.WaitQuiet(time.Second, 20*time.Second)
	// The sampler decides decision_wait after a trace's first span.
	time.Sleep(time.Until(sent.Add(r.groupTimeout + settle + r.decisionWait + time.Second)))
	r.kept.WaitQuiet(time.Second, 20*time.Second)
	if err := r.running.alive(); err != nil {
		return err
	}
	r.running.stop()
	r.running = nil
	return nil
}

// sendRounds sends each round's requests to the single collector and to the
// router, in order.
func sendRounds(rounds [][][]byte, singleAddr, routerAddr string) error {
	for _, reqs := range rounds {
		var wg sync.WaitGroup
		var errRouter, errSingle error
		wg.Go(func() { errRouter = post(routerAddr, reqs) })
		wg.Go(func() { errSingle = post(singleAddr, reqs) })
		wg.Wait()
		if err := errors.Join(errRouter, errSingle); err != nil {
			return err
		}
	}
	return nil
}

// turnRounds splits the recorded spans into one request a trace (a turn),
// and orders them in rounds: round k holds the k-th turn of every
// conversation that has one.
func turnRounds(recorded []ptrace.Traces) ([][][]byte, error) {
	traces := map[pcommon.TraceID]ptrace.Traces{}
	convOf := map[pcommon.TraceID]string{}
	startOf := map[pcommon.TraceID]pcommon.Timestamp{}
	for _, td := range recorded {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					id := sp.TraceID()
					t, ok := traces[id]
					if !ok {
						t = ptrace.NewTraces()
						traces[id] = t
					}
					out := t.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(out.Resource())
					oss := out.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(oss.Scope())
					sp.CopyTo(oss.Spans().AppendEmpty())
					if c, ok := sp.Attributes().Get("gen_ai.conversation.id"); ok {
						convOf[id] = c.Str()
					}
					if s := startOf[id]; s == 0 || sp.StartTimestamp() < s {
						startOf[id] = sp.StartTimestamp()
					}
				}
			}
		}
	}
	turns := map[string][]pcommon.TraceID{}
	for id := range traces {
		c, ok := convOf[id]
		if !ok {
			return nil, fmt.Errorf("trace %s carries no gen_ai.conversation.id", id)
		}
		turns[c] = append(turns[c], id)
	}
	var rounds [][][]byte
	for _, c := range slices.Sorted(maps.Keys(turns)) {
		ids := turns[c]
		slices.SortFunc(ids, func(a, b pcommon.TraceID) int { return cmp.Compare(startOf[a], startOf[b]) })
		for k, id := range ids {
			if k == len(rounds) {
				rounds = append(rounds, nil)
			}
			body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(traces[id])
			if err != nil {
				return nil, err
			}
			rounds[k] = append(rounds[k], body)
		}
	}
	return rounds, nil
}
