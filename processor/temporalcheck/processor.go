// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/events"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/core/texpr"
	"github.com/agentguard/agentguard/internal/stage"
	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
)

// checker runs the assertions over each group's events and annotates the
// spans that decide a violation (or every verdict, with report: all). It is
// shared by the stage's workers: its own state is read-only, a group's state
// is the worker's.
type checker struct {
	cfg      *Config
	runner   *assertion.Runner
	tel      *metadata.TelemetryBuilder
	warnings *stage.Warnings
	triggers []trigger // per assertion
	// verdictAttrs are the verdict counter's attributes per assertion and
	// verdict kind, made once: a set made per verdict allocates.
	verdictAttrs map[*assertion.Compiled][]metric.AddOption
	fingerprint  string // of what a group's saved state depends on
}

// trigger is when an assertion is triggered (texpr.Triggers), with its
// metric attribute made once.
type trigger struct {
	mask     uint64
	any      bool
	anchored bool // an initially assertion: only a sequence's first event can trigger it
	attr     metric.AddOption
}

func newProcessor(cfg *Config, id component.ID, set component.TelemetrySettings, next consumer.Traces, tel *metadata.TelemetryBuilder) (*temporalProcessor, error) {
	compiled, err := assertion.Compile(cfg.Assertions, cfg.predicateNames(), cfg.MaxThreads)
	if err != nil {
		return nil, err
	}
	fp, err := cfg.fingerprint()
	if err != nil {
		return nil, err
	}
	c := &checker{cfg: cfg, tel: tel, fingerprint: fp, runner: assertion.NewRunner(compiled, assertion.Options{
		Passes: cfg.Report == ReportAll, MaxEventsPerGroup: cfg.MaxEventsPerGroup, Captures: cfg.Config.Captures(),
	})}
	noRetention := false
	if err := c.runner.Checkpointable(); err != nil {
		switch {
		case cfg.Storage != nil:
			return nil, fmt.Errorf("storage: %w", err)
		case cfg.RetentionSet() && *cfg.Retention > 0:
			return nil, fmt.Errorf("retention: %w", err)
		case cfg.CompactAfterSet() && *cfg.CompactAfter > 0:
			return nil, fmt.Errorf("compact_after: %w", err)
		}
		noRetention = true // nothing can be kept: a conversation that comes back is marked, and an idle one stays as it is
	}
	c.verdictAttrs = map[*assertion.Compiled][]metric.AddOption{}
	own := c.runner.Assertions()
	for i := range own {
		a := &own[i] // the runner's own: its verdicts point here
		for k := texpr.Match; k <= texpr.Error; k++ {
			v := assertion.Verdict{Verdict: texpr.Verdict{Kind: k}}
			c.verdictAttrs[a] = append(c.verdictAttrs[a], metric.WithAttributes(
				attribute.String(metadata.AttrAssertion, a.Name), attribute.String(metadata.AttrVerdict, v.VerdictName())))
		}
	}
	for _, a := range compiled {
		mask, any := texpr.Triggers(a.Spec.Expr)
		c.triggers = append(c.triggers, trigger{mask: mask, any: any, anchored: a.Spec.Anchored,
			attr: metric.WithAttributes(attribute.String(metadata.AttrAssertion, a.Name))})
	}
	scfg := cfg.StageConfig()
	scfg.Literals, scfg.Optional = cfg.Config.Literals(), cfg.Config.OptionalNames()
	if noRetention {
		scfg.Retention, scfg.CompactAfter = 0, 0
	}
	scfg.Late, scfg.Scope, scfg.ID = stage.LateResume, metadata.ScopeName, id
	if cfg.RiskEndpoint != nil {
		scfg.RememberJudged = stage.JudgedForQuestions
	}
	if cfg.Judge == JudgeOnArrival {
		// A trace judged on arrival goes on in batches: later spans continue its group.
		scfg.Late, scfg.OnArrival = stage.LateContinue, true
	}
	s, err := stage.New(scfg, set, next, tel.Stage, func() (*events.Source, error) { return events.NewSource(cfg.Config, cfg.GroupBy, set) }, c)
	if err != nil {
		return nil, err
	}
	c.warnings = s.Warnings
	return &temporalProcessor{Stage: s, c: c, id: id}, nil
}

// Open is a new group's monitors.
func (c *checker) Open(string) *assertion.Group { return c.runner.NewGroup() }

// Events runs the group's next events through its monitors.
func (c *checker) Events(ctx context.Context, key string, g *assertion.Group, h stage.History, seq []sequence.Event) {
	evs := assertionEvents(seq)
	c.countTriggers(ctx, evs, g.Len())
	c.tel.EventsPerGroup.Record(ctx, int64(len(evs)))
	c.report(ctx, c.runner.Step(key, g, evs), h, nil)
}

// assertionEvents are a group's events as the runner takes them.
func assertionEvents(seq []sequence.Event) []assertion.Event {
	evs := make([]assertion.Event, len(seq))
	for i, ev := range seq {
		evs[i] = assertion.Event{Bits: ev.Bits, Time: int64(ev.Start), Name: predicate.Describe(ev.Span), Span: ev.Span, Captures: ev.Captures}
	}
	return evs
}

// verdictAttr is the verdict counter's attribute set of a verdict.
func (c *checker) verdictAttr(v assertion.Verdict) metric.AddOption {
	if sets, ok := c.verdictAttrs[v.Assertion]; ok && int(v.Kind) < len(sets) {
		return sets[v.Kind]
	}
	return metric.WithAttributes(attribute.String(metadata.AttrAssertion, v.Assertion.Name),
		attribute.String(metadata.AttrVerdict, v.VerdictName()))
}

// countTriggers counts, per assertion, the events that triggered it: an
// assertion never triggered was never tested (see agentguard check). seen
// is the number of the sequence's events before evs.
func (c *checker) countTriggers(ctx context.Context, evs []assertion.Event, seen int) {
	for _, t := range c.triggers {
		n := 0
		for i, ev := range evs {
			if t.anchored && seen+i > 0 {
				break
			}
			if t.any || ev.Bits&t.mask != 0 {
				n++
			}
		}
		if n > 0 {
			c.tel.AssertionTriggered.Add(ctx, int64(n), t.attr)
		}
	}
}

// End applies the end policy; what it decides goes on the target.
func (c *checker) End(ctx context.Context, key string, g *assertion.Group, h stage.History, at *stage.Target) {
	c.report(ctx, c.runner.End(key, g), h, at)
}

// Resumed: a group that ended is taken up where it was before its end; the
// evaluations that end decided are not reported again.
func (c *checker) Resumed(_ string, g *assertion.Group) { c.runner.Resumed(g) }

// report counts every verdict and annotates the ones the config asks for;
// verdicts decided at a group's end are placed on at first. A verdict on a
// history that may be incomplete is reported all the same, marked: hiding
// it could hide a real violation, and the mark lets a reader or an alert
// rule weigh it.
func (c *checker) report(ctx context.Context, vs []assertion.Verdict, h stage.History, at *stage.Target) {
	for _, v := range vs {
		c.tel.Verdicts.Add(ctx, 1, c.verdictAttr(v))
		if v.History = h.String(); v.History != "" {
			c.tel.Stage.VerdictsHistoryIncomplete.Add(ctx, 1, metric.WithAttributes(attribute.String(stage.AttrHistory, v.History)))
		}
		if v.Kind == texpr.Error {
			c.warnings.Once("threads-"+v.Assertion.Name, "an assertion exceeded max_threads; its live evaluations were abandoned",
				zap.String("assertion", v.Assertion.Name), zap.String("detail", v.TreeNote))
		}
		if !v.Violation && c.cfg.Report != ReportAll {
			continue
		}
		if !v.Attached {
			v.Span, v.Attached = at.Span(), true
		}
		assertion.Annotate(v)
	}
}

// Fingerprint identifies what a group's saved state depends on.
func (c *checker) Fingerprint() string { return c.fingerprint }

// AppendState saves a group's events since its sequence began.
func (c *checker) AppendState(b []byte, g *assertion.Group) []byte { return c.runner.AppendGroup(b, g) }

// RestoreState rebuilds a group's monitors by replaying its saved events.
func (c *checker) RestoreState(_ string, data []byte) (*assertion.Group, error) {
	return c.runner.RestoreGroup(data)
}
