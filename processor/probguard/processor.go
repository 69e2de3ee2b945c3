// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/extension/riskendpoint"
	"github.com/agentguard/agentguard/internal/core/events"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/stage"
	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/processor/probguard/internal/metadata"
)

// probProcessor is the holding stage with probguard's scoring as its
// evaluator: each event of a group is scored against the served model in
// order, annotated when the configuration reports it, and learned from if
// asked. Late spans are scored as their group's continuation.
type probProcessor struct {
	*stage.Stage[*group]
	cfg      *Config
	logger   *zap.Logger
	tel      *metadata.TelemetryBuilder
	attrs    *metricAttrs
	warnings *stage.Warnings
	now      func() time.Time

	// served is swapped whole when learn.serve installs a new model; the
	// scoring path reads it without a lock. nil: learning only.
	served atomic.Pointer[servedModel]
	// board is the risk endpoint each decision is published to (nil: none),
	// found at Start; unregister stops its questions (decide.go).
	board      riskendpoint.Board
	unregister func()
	// mu guards the learner, which every worker counts into.
	mu      sync.Mutex
	learner *onlineLearner // nil without learn

	fingerprint string // of what a group's saved state depends on
	id          component.ID
}

// group is one open group's state: its run through the guard, its path
// through learning, and its events so far.
type group struct {
	run    guard.Run
	path   guard.Path
	events int                // scored so far
	slot   *riskendpoint.Slot // where its decisions are published; nil without a risk endpoint
}

func newProcessor(cfg *Config, id component.ID, set component.TelemetrySettings, next consumer.Traces, tel *metadata.TelemetryBuilder) (*probProcessor, error) {
	fp, err := cfg.fingerprint()
	if err != nil {
		return nil, err
	}
	p := &probProcessor{cfg: cfg, logger: set.Logger, tel: tel, now: time.Now, attrs: newMetricAttrs(cfg), fingerprint: fp, id: id}
	if cfg.Model != "" {
		served, err := loadServed(cfg)
		if err != nil {
			return nil, err
		}
		for _, note := range served.guard.Model().Notes() {
			p.logger.Warn("model: "+note, zap.String("model", cfg.Model))
		}
		p.served.Store(served)
	} else {
		p.logger.Info("no model configured: learning only, no event is scored", zap.String("learn.output", cfg.Learn.Output))
	}
	if cfg.Learn != nil {
		var err error
		if p.learner, err = newOnlineLearner(cfg); err != nil {
			return nil, err
		}
	}
	scfg := cfg.StageConfig()
	scfg.Literals, scfg.Optional = cfg.Config.Literals(), cfg.Config.OptionalNames()
	scfg.Late, scfg.OnArrival, scfg.Scope, scfg.ID = stage.LateContinue, cfg.Score == ScoreOnArrival, metadata.ScopeName, id
	if cfg.RiskEndpoint != nil {
		scfg.RememberJudged = stage.JudgedForQuestions
	}
	scfg.AfterTick = func() { p.maybeLearn(context.Background(), false) }
	// The learned counts are checkpointed with the groups, to learn.output,
	// which a start goes on from.
	scfg.AfterCheckpoint = func() { p.maybeLearn(context.Background(), true) }
	s, err := stage.New(scfg, set, next, tel.Stage, func() (*events.Source, error) { return events.NewSource(cfg.Config, cfg.GroupBy, set) }, p)
	if err != nil {
		return nil, err
	}
	p.Stage, p.warnings = s, s.Warnings
	return p, nil
}

// UseClock makes the processor and its stage read time from now: for tests,
// before Start.
func (p *probProcessor) UseClock(now func() time.Time) {
	p.now = now
	p.Stage.UseClock(now)
}

// Start finds the risk endpoint, records the served model's PAC status,
// starts the stage and then registers with the endpoint: a question or a
// peer's hand-over that came while the stage restored its checkpoint would
// find the groups not yet back.
func (p *probProcessor) Start(ctx context.Context, host component.Host) error {
	var registry riskendpoint.Registry
	if id := p.cfg.RiskEndpoint; id != nil {
		ext, board, err := riskendpoint.Find[riskendpoint.Board](host, *id)
		if err != nil {
			return err
		}
		p.board = board
		registry, _ = ext.(riskendpoint.Registry)
		if tier, ok := riskendpoint.TierFor(ext, p.id.String()); ok {
			p.UseTier(tier)
		}
	}
	if served := p.served.Load(); served != nil {
		p.recordPAC(ctx, served.guard.Model(), metadata.ModelServed)
	}
	if err := p.Stage.Start(ctx, host); err != nil {
		return err
	}
	if registry != nil {
		p.unregister = registry.Register(p.id.String(), p)
	}
	return nil
}

// Shutdown scores everything held, ends every group and writes the learned
// model a last time.
func (p *probProcessor) Shutdown(ctx context.Context) error {
	if p.unregister != nil {
		p.unregister()
	}
	err := p.Stage.Shutdown(ctx)
	p.maybeLearn(ctx, true)
	return err
}

// Open is a new group's state, with its slot at the risk endpoint.
func (p *probProcessor) Open(key string) *group {
	g := &group{}
	if p.board != nil {
		g.slot = p.board.Open(key)
	}
	return g
}

// Events scores the group's next events in order and learns from them.
func (p *probProcessor) Events(ctx context.Context, key string, st *group, h stage.History, evs []sequence.Event) {
	served := p.served.Load()
	for _, ev := range evs {
		st.events++
		p.learn(ctx, st, ev.Bits)
		if served != nil {
			p.decide(ctx, served.guard, st, key, h, ev.Span, ev.Bits)
		}
	}
}

// End ends a group's run: learning counts its move to end. probguard decides
// nothing at a group's end.
func (p *probProcessor) End(_ context.Context, key string, st *group, _ stage.History, _ *stage.Target) {
	if st.slot != nil {
		p.board.Close(key, st.slot)
	}
	if p.learner == nil {
		return
	}
	p.mu.Lock()
	p.learner.End(&st.path)
	p.mu.Unlock()
}

// Resumed takes back the end learning counted for a group that goes on: a
// conversation kept for retention, or a trace kept for its late spans,
// taken up again (stage.Resumer). Live learning then counts a run's end
// once, as agentguard learn does.
func (p *probProcessor) Resumed(_ string, st *group) {
	if p.learner == nil {
		return
	}
	p.mu.Lock()
	p.learner.Resume(st.path)
	p.mu.Unlock()
}

// Forget drops the group's slot at the risk endpoint, whichever it is: the
// group left without ending here (stage.Forgetter).
func (p *probProcessor) Forget(key string) {
	if p.board != nil {
		p.board.Close(key, p.board.Resume(key))
	}
}

// decide scores one event and annotates it if the configuration reports it.
// A report on a history that may be incomplete is made all the same, marked
// (see temporalcheck's report).
func (p *probProcessor) decide(ctx context.Context, g *guard.Guard, st *group, key string, h stage.History, span ptrace.Span, bits uint64) {
	d := g.Step(&st.run, bits)
	switch {
	case !d.Known && !d.Violation:
		p.tel.UnknownStates.Add(ctx, 1)
		p.warnings.Once("unknown", "an event reached a state the model never saw; it is not taken as safe (see unknown_state)",
			zap.String("state", g.StateName(d.State)), zap.String("group", key))
	default:
		p.tel.PSafe.Record(ctx, d.PSafe, p.attrs.property...)
	}
	if st.slot != nil {
		st.slot.Publish(&riskendpoint.Decision{Guard: g, Decision: d, Group: key, Event: st.events,
			TraceID: span.TraceID(), SpanID: span.SpanID(), At: p.now(), History: h.String()})
	}
	if !d.Report {
		return
	}
	g.Annotate(span, d, key, st.events)
	p.tel.Interventions.Add(ctx, 1, p.attrs.intervention(d)...)
	if mark := h.String(); mark != "" {
		markLast(span, mark)
		p.tel.Stage.VerdictsHistoryIncomplete.Add(ctx, 1, p.attrs.history(mark))
	}
}

func (p *probProcessor) learn(ctx context.Context, st *group, bits uint64) {
	if p.learner == nil {
		return
	}
	p.mu.Lock()
	why := p.learner.Step(&st.path, bits)
	p.mu.Unlock()
	if why != "" {
		p.tel.InvalidTransitions.Add(ctx, 1)
		p.warnings.Once("invalid-transition", "the live traffic made a move valid_transitions forbid; learning skips it", zap.String("move", why))
	}
}

// warnOnce logs a kind of decision not taken the first time it happens.
func (p *probProcessor) warnOnce(kind, msg string, fields ...zap.Field) {
	p.warnings.Once(kind, msg, fields...)
}

// markLast marks the verdict just written on span (its last event) with the
// history it was decided on.
func markLast(span ptrace.Span, mark string) {
	evs := span.Events()
	ev := evs.At(evs.Len() - 1)
	ev.Attributes().PutStr(verdictattr.History, mark)
	if e, ok := ev.Attributes().Get(verdictattr.Explanation); ok {
		e.SetStr(strings.TrimSuffix(e.Str(), "\n") + "\n" + verdictattr.HistoryNote(mark))
	}
}
