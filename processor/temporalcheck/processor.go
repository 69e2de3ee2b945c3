package temporalcheck

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/hold"
	"github.com/agentguard/agentguard/internal/core/texpr"
	"github.com/agentguard/agentguard/internal/core/tracebuffer"
	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
)

// temporalProcessor holds each trace until it is complete, turns it into its
// group's events, runs the assertions, annotates the deciding spans and
// passes every span on. One mutex serialises the buffer and the runner; the
// next consumer is called outside it.
type temporalProcessor struct {
	cfg    *Config
	next   consumer.Traces
	logger *zap.Logger
	tel    *metadata.TelemetryBuilder
	events *eventSource
	now    func() time.Time

	mu         sync.Mutex
	buf        *tracebuffer.Buffer
	runner     *assertion.Runner
	groupsSeen *hold.Recent[struct{}] // attribute groups, by when their last trace was evaluated
	warnings   *hold.Warnings
	held       *hold.Gauge
	lastEvent  map[string]ptrace.Span // per group, the last event of the traces just evaluated, not yet passed on

	clock hold.Clock
}

func newProcessor(cfg *Config, set component.TelemetrySettings, next consumer.Traces, events *eventSource, tel *metadata.TelemetryBuilder) (*temporalProcessor, error) {
	compiled, err := assertion.Compile(cfg.Assertions, cfg.predicateNames(), cfg.MaxThreads)
	if err != nil {
		return nil, err
	}
	return &temporalProcessor{
		cfg: cfg, next: next, logger: set.Logger, tel: tel, events: events, now: time.Now,
		buf: cfg.bounds().Buffer(),
		runner: assertion.NewRunner(compiled, assertion.Options{
			Passes: cfg.Report == ReportAll, MaxEventsPerGroup: cfg.MaxEventsPerGroup,
		}),
		groupsSeen: hold.NewRecent[struct{}](),
		warnings:   hold.NewWarnings(set.Logger),
		held:       hold.NewGauge(tel.TracesHeld),
		lastEvent:  map[string]ptrace.Span{},
	}, nil
}

func (p *temporalProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

// Start runs the clock that releases complete traces.
func (p *temporalProcessor) Start(context.Context, component.Host) error {
	p.clock.Start(p.cfg.bounds().Interval(), func() {
		p.forward(context.Background(), p.expire())
	})
	return nil
}

// ConsumeTraces takes the spans in. Late spans of released traces pass at
// once; traces a bound forces out are evaluated and passed on now.
func (p *temporalProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	p.mu.Lock()
	late, lateSpans, forced := p.buf.Add(td, p.now())
	out := p.evaluate(ctx, forced)
	p.recordHeld(ctx)
	if lateSpans > 0 {
		p.tel.LateSpans.Add(ctx, int64(lateSpans))
		p.warnOnce("late", "spans arrived after their trace was released; they pass through unchecked (raise wait or root_wait)",
			zap.Int("spans", lateSpans))
		out = append(out, late)
	}
	p.mu.Unlock()
	p.forward(ctx, out)
	return nil
}

// expire evaluates the traces complete by now and ends idle groups.
func (p *temporalProcessor) expire() []ptrace.Traces {
	ctx := context.Background()
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.evaluate(ctx, p.buf.Expire(p.now()))
	p.recordHeld(ctx)
	p.endIdleGroups(ctx)
	return out
}

// Shutdown evaluates and passes on everything held, then ends every group.
func (p *temporalProcessor) Shutdown(ctx context.Context) error {
	p.clock.Stop()
	p.mu.Lock()
	out := p.evaluate(ctx, p.buf.Flush())
	p.recordHeld(ctx)
	for _, key := range p.runner.Keys() {
		p.endGroup(ctx, key)
	}
	p.mu.Unlock()
	p.forward(ctx, out)
	return nil
}

// forward passes batches on. A refusal is counted and logged once, not
// returned: the spans were accepted when they came in.
func (p *temporalProcessor) forward(ctx context.Context, batches []ptrace.Traces) {
	hold.ForwardCounted(ctx, p.next, batches, p.tel.ForwardFailures, p.warnings)
}

// evaluate runs the assertions over released traces and annotates them.
func (p *temporalProcessor) evaluate(ctx context.Context, traces []*tracebuffer.Trace) []ptrace.Traces {
	out := make([]ptrace.Traces, 0, len(traces))
	clear(p.lastEvent)
	for _, t := range traces {
		start := time.Now()
		hold.CountEarly(ctx, t, p.tel.TracesReleasedEarly, p.warnings)
		key, events, errs := p.events.extract(t)
		if errs > 0 {
			p.tel.PredicateErrors.Add(ctx, int64(errs))
			p.warnOnce("predicate-errors", "OTTL conditions failed on some spans; those predicates count as false there", zap.Int("errors", errs))
		}
		perTrace := p.cfg.GroupBy == GroupByTrace
		p.report(ctx, p.runner.Run(key, events, perTrace))
		if len(events) > 0 {
			p.lastEvent[key] = events[len(events)-1].Span
		}
		if !perTrace {
			p.groupsSeen.Touch(key, p.now(), func() struct{} { return struct{}{} })
		}
		p.tel.EventsPerGroup.Record(ctx, int64(len(events)))
		p.tel.EvaluationTime.Record(ctx, time.Since(start).Seconds())
		out = append(out, t.Spans)
	}
	p.boundGroups(ctx)
	return out
}

// report counts every verdict and annotates the ones the config asks for.
// A verdict whose spans have left can only be logged.
func (p *temporalProcessor) report(ctx context.Context, vs []assertion.Verdict) {
	for _, v := range vs {
		p.tel.Verdicts.Add(ctx, 1, metric.WithAttributes(attribute.String("assertion", v.Assertion.Name),
			attribute.String("verdict", v.VerdictName())))
		if v.Kind == texpr.Error {
			p.warnOnce("threads-"+v.Assertion.Name, "an assertion exceeded max_threads; its live evaluations were abandoned",
				zap.String("assertion", v.Assertion.Name), zap.String("detail", v.TreeNote))
		}
		switch {
		case !v.Attached:
			p.tel.UnattachedVerdicts.Add(ctx, 1, metric.WithAttributes(attribute.String("assertion", v.Assertion.Name)))
			p.logger.Info("verdict decided after the group's spans left", zap.String("assertion", v.Assertion.Name),
				zap.String("group", v.Group), zap.String("verdict", v.VerdictName()), zap.Bool("violation", v.Violation),
				zap.String("explanation", v.Explanation))
		case v.Violation || p.cfg.Report == ReportAll:
			assertion.Annotate(v)
		}
	}
}

// endIdleGroups ends the attribute groups without a trace for GroupTimeout.
func (p *temporalProcessor) endIdleGroups(ctx context.Context) {
	for _, key := range p.groupsSeen.Idle(p.now(), p.cfg.GroupTimeout) {
		p.endGroup(ctx, key)
	}
}

// boundGroups ends the least recently active groups past MaxTraces.
func (p *temporalProcessor) boundGroups(ctx context.Context) {
	for p.groupsSeen.Len() > p.cfg.MaxTraces {
		oldest := p.groupsSeen.Oldest()
		p.warnOnce("groups", "more open groups than max_traces: the least recently active was ended early", zap.String("group", oldest))
		p.endGroup(ctx, oldest)
	}
}

// endGroup applies the end policy to a group. Every caller runs right after
// an evaluate, whose traces are not yet passed on: if the group's last trace
// is among them, its end-of-sequence verdicts go on that trace's last event.
func (p *temporalProcessor) endGroup(ctx context.Context, key string) {
	p.groupsSeen.Remove(key)
	p.events.forget(key)
	vs := p.runner.Finish(key)
	if span, ok := p.lastEvent[key]; ok {
		for i := range vs {
			vs[i].Span, vs[i].Attached = span, true
		}
	}
	p.report(ctx, vs)
}

// recordHeld keeps the traces-held gauge equal to the buffer's size.
func (p *temporalProcessor) recordHeld(ctx context.Context) { p.held.Record(ctx, p.buf.Len()) }

// warnOnce logs a kind of decision not taken the first time it happens.
func (p *temporalProcessor) warnOnce(kind, msg string, fields ...zap.Field) {
	p.warnings.Once(kind, msg, fields...)
}
