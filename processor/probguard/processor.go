package probguard

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/core/events"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/core/hold"
	"github.com/agentguard/agentguard/internal/core/tracebuffer"
	"github.com/agentguard/agentguard/processor/probguard/internal/metadata"
)

// probProcessor holds each trace briefly so that its events are in order,
// scores every event of its group against the served model, annotates the
// events the configuration reports, learns from them if asked, and passes
// every span on. One mutex serialises the buffer, the groups and the
// learner; the next consumer is called outside it.
type probProcessor struct {
	cfg    *Config
	next   consumer.Traces
	logger *zap.Logger
	tel    *metadata.TelemetryBuilder
	attrs  *metricAttrs
	src    *events.Source
	now    func() time.Time

	mu       sync.Mutex
	buf      *tracebuffer.Buffer
	served   *servedModel // nil: learning only
	groups   *hold.Recent[*group]
	learner  *onlineLearner // nil without learn
	warnings *hold.Warnings
	held     *hold.Gauge

	clock hold.Clock
}

// group is one open group's state: its run through the guard, its path
// through learning, and its events so far.
type group struct {
	run    guard.Run
	path   guard.Path
	events int // scored so far
}

func newProcessor(cfg *Config, set component.TelemetrySettings, next consumer.Traces, src *events.Source, tel *metadata.TelemetryBuilder) (*probProcessor, error) {
	p := &probProcessor{
		cfg: cfg, next: next, logger: set.Logger, tel: tel, src: src, now: time.Now,
		buf:      cfg.bounds().Buffer(),
		groups:   hold.NewRecent[*group](),
		warnings: hold.NewWarnings(set.Logger),
		held:     hold.NewGauge(tel.TracesHeld),
	}
	var err error
	if cfg.Model != "" {
		if p.served, err = loadServed(cfg); err != nil {
			return nil, err
		}
		for _, note := range p.served.guard.Model().Notes() {
			p.logger.Warn("model: "+note, zap.String("model", cfg.Model))
		}
	} else {
		p.logger.Info("no model configured: learning only, no event is scored", zap.String("learn.output", cfg.Learn.Output))
	}
	if cfg.Learn != nil {
		if p.learner, err = newOnlineLearner(cfg); err != nil {
			return nil, err
		}
	}
	p.attrs = newMetricAttrs(cfg)
	return p, nil
}

func (p *probProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

// Start runs the clock that releases complete traces, ends idle groups and
// writes the learned model.
func (p *probProcessor) Start(context.Context, component.Host) error {
	if p.served != nil {
		p.recordPAC(context.Background(), p.served.guard.Model(), "served")
	}
	p.clock.Start(p.cfg.bounds().Interval(), func() {
		p.forward(context.Background(), p.expire())
		p.maybeLearn(context.Background(), false)
	})
	return nil
}

// ConsumeTraces takes the spans in. Late spans of released traces are
// scored at once as their groups' continuation; traces a bound forces out
// are scored and passed on now.
func (p *probProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	p.mu.Lock()
	late, lateSpans, forced := p.buf.Add(td, p.now())
	out := p.release(ctx, forced)
	p.recordHeld(ctx)
	if lateSpans > 0 {
		p.tel.LateSpans.Add(ctx, int64(lateSpans))
		p.warnOnce("late", "spans arrived after their trace was scored; they are scored as the continuation of its group, in arrival order (raise wait for a strict order)",
			zap.Int("spans", lateSpans))
		p.score(ctx, late)
		out = append(out, late)
	}
	p.mu.Unlock()
	p.forward(ctx, out)
	return nil
}

// expire scores the traces complete by now and ends idle groups.
func (p *probProcessor) expire() []ptrace.Traces { return p.expireAt(p.now()) }

func (p *probProcessor) expireAt(now time.Time) []ptrace.Traces {
	ctx := context.Background()
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.release(ctx, p.buf.Expire(now))
	p.recordHeld(ctx)
	p.endIdleGroups(now)
	return out
}

// Shutdown scores and passes on everything held, ends every group and
// writes the learned model a last time.
func (p *probProcessor) Shutdown(ctx context.Context) error {
	p.clock.Stop()
	p.mu.Lock()
	out := p.release(ctx, p.buf.Flush())
	p.recordHeld(ctx)
	for _, key := range p.groups.Keys() {
		p.endGroup(key)
	}
	p.mu.Unlock()
	p.forward(ctx, out)
	p.maybeLearn(ctx, true)
	return nil
}

// forward passes batches on. A refusal is counted and logged once, not
// returned: the spans were accepted when they came in.
func (p *probProcessor) forward(ctx context.Context, batches []ptrace.Traces) {
	hold.ForwardCounted(ctx, p.next, batches, p.tel.ForwardFailures, p.warnings)
}

// release scores released traces and returns their spans.
func (p *probProcessor) release(ctx context.Context, traces []*tracebuffer.Trace) []ptrace.Traces {
	out := make([]ptrace.Traces, 0, len(traces))
	for _, t := range traces {
		hold.CountEarly(ctx, t, p.tel.TracesReleasedEarly, p.warnings)
		p.score(ctx, t.Spans)
		out = append(out, t.Spans)
	}
	p.boundGroups()
	return out
}

// score runs every event of the chunk through its group's guard and
// learner, in order.
func (p *probProcessor) score(ctx context.Context, td ptrace.Traces) {
	groups, errs := p.src.Continue(td)
	if errs > 0 {
		p.tel.PredicateErrors.Add(ctx, int64(errs))
		p.warnOnce("predicate-errors", "OTTL conditions failed on some spans; those predicates count as false there", zap.Int("errors", errs))
	}
	now := p.now()
	for _, g := range groups {
		st := p.groups.Touch(g.Key, now, func() *group { return &group{} })
		for _, ev := range g.Events {
			st.events++
			p.learn(ctx, st, ev.Bits)
			if p.served != nil {
				p.decide(ctx, st, g.Key, ev.Span, ev.Bits)
			}
		}
	}
}

// decide scores one event and annotates it if the configuration reports it.
func (p *probProcessor) decide(ctx context.Context, st *group, key string, span ptrace.Span, bits uint64) {
	g := p.served.guard
	d := g.Step(&st.run, bits)
	switch {
	case !d.Known && !d.Violation:
		p.tel.UnknownStates.Add(ctx, 1)
		p.warnOnce("unknown", "an event reached a state the model never saw; it is not taken as safe (see unknown_state)",
			zap.String("state", g.StateName(d.State)), zap.String("group", key))
	default:
		p.tel.PSafe.Record(ctx, d.PSafe, p.attrs.property...)
	}
	if !d.Report {
		return
	}
	g.Annotate(span, d, key, st.events)
	p.tel.Interventions.Add(ctx, 1, p.attrs.intervention(d)...)
}

func (p *probProcessor) learn(ctx context.Context, st *group, bits uint64) {
	if p.learner == nil {
		return
	}
	if why := p.learner.Step(&st.path, bits); why != "" {
		p.tel.InvalidTransitions.Add(ctx, 1)
		p.warnOnce("invalid-transition", "the live traffic made a move valid_transitions forbid; learning skips it", zap.String("move", why))
	}
}

// endIdleGroups ends the groups without an event for GroupTimeout.
func (p *probProcessor) endIdleGroups(now time.Time) {
	for _, key := range p.groups.Idle(now, p.cfg.GroupTimeout) {
		p.endGroup(key)
	}
}

// boundGroups ends the least recently active groups past MaxTraces.
func (p *probProcessor) boundGroups() {
	for p.groups.Len() > p.cfg.MaxTraces {
		oldest := p.groups.Oldest()
		p.tel.GroupsEndedEarly.Add(context.Background(), 1)
		p.warnOnce("groups", "more open groups than max_traces: the least recently active was ended early", zap.String("group", oldest))
		p.endGroup(oldest)
	}
}

// endGroup ends a group's run: learning counts its move to end.
func (p *probProcessor) endGroup(key string) {
	if st, ok := p.groups.Remove(key); ok && p.learner != nil {
		p.learner.End(&st.path)
	}
	p.src.Forget(key)
}

// recordHeld keeps the traces-held gauge equal to the buffer's size.
func (p *probProcessor) recordHeld(ctx context.Context) { p.held.Record(ctx, p.buf.Len()) }

// warnOnce logs a kind of decision not taken the first time it happens.
func (p *probProcessor) warnOnce(kind, msg string, fields ...zap.Field) {
	p.warnings.Once(kind, msg, fields...)
}
