// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/processor/probguard/internal/metadata"
)

func newTestProcessor(t testing.TB, cfg *Config, set processor.Settings) (*probProcessor, *consumertest.TracesSink) {
	t.Helper()
	if cfg.WarmUp == nil {
		cfg.WarmUp = new(time.Duration) // none: the fixtures' traces started before the test (warm_up has its own tests)
	}
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), set, cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	return p.(*probProcessor), sink
}

func nopSettings() processor.Settings { return processortest.NewNopSettings(metadata.Type) }

func feed(t testing.TB, p *probProcessor, tds ...ptrace.Traces) int {
	t.Helper()
	n := 0
	for _, td := range tds {
		n += td.SpanCount()
		if err := p.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

func shutdown(t testing.TB, p *probProcessor) {
	t.Helper()
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// annotations lists probguard's evaluation events the sink received, as
// "span-name label state p_safe", in span start order.
func annotations(sink *consumertest.TracesSink) []string {
	type row struct {
		start pcommon.Timestamp
		text  string
	}
	var rows []row
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, span := range ss.Spans().All() {
					for _, ev := range span.Events().All() {
						a := ev.Attributes().AsRaw()
						if ev.Name() != verdictattr.EvaluationEvent || a[verdictattr.Check] != verdictattr.CheckProb {
							continue
						}
						text := fmt.Sprintf("%s %s %s", span.Name(), a[verdictattr.ScoreLabel], a[verdictattr.State])
						if ps, ok := a[verdictattr.PSafe].(float64); ok {
							text += fmt.Sprintf(" %.4f", ps)
						}
						if v, ok := span.Attributes().Get(verdictattr.Violation); ok && v.Bool() {
							text += " violation"
						}
						rows = append(rows, row{span.StartTimestamp(), text})
					}
				}
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(a.start, b.start) })
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.text
	}
	return out
}

// splitAfter cuts a one-scope trace in two: its first k spans, and the rest.
func splitAfter(td ptrace.Traces, k int) (first, rest ptrace.Traces) {
	first, rest = ptrace.NewTraces(), ptrace.NewTraces()
	for i, dst := range []ptrace.Traces{first, rest} {
		td.ResourceSpans().CopyTo(dst.ResourceSpans())
		j := 0
		dst.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(ptrace.Span) bool {
			keep := (j < k) == (i == 0)
			j++
			return !keep
		})
	}
	return first, rest
}
