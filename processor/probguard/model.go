package probguard

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/guard"
)

// The PAC status in the self-metrics is for these ε and δ.
const pacEpsilon, pacDelta = 0.1, 0.05

// servedModel is the model events are scored against, its property solved.
type servedModel struct {
	guard *guard.Guard
	base  *dtmc.Counts // the model file's counts, which serve adds to
	since time.Time    // when the model was written
}

// loadServed reads, checks and solves the configured model.
func loadServed(cfg *Config) (*servedModel, error) {
	m, err := cfg.LoadModel()
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(cfg.Model)
	if err != nil {
		return nil, err
	}
	g, err := solve(cfg, m)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", cfg.Model, err)
	}
	return &servedModel{guard: g, base: m.Counts(), since: info.ModTime()}, nil
}

// solve computes P_safe of the configured property for every state, once.
func solve(cfg *Config, m *dtmc.Model) (*guard.Guard, error) {
	sv, err := dtmc.NewSolver(dtmc.Options{})
	if err != nil {
		return nil, err
	}
	return guard.New(m, cfg.GuardOptions(), sv)
}

// onlineLearner counts the live traffic.
type onlineLearner struct {
	*guard.Learner
	written time.Time // when learn.output was last written
}

// newOnlineLearner starts from the counts learn.output already holds, so
// that a restart goes on counting instead of overwriting them.
func newOnlineLearner(cfg *Config) (*onlineLearner, error) {
	l, err := guard.NewLearner(cfg.Spec())
	if err != nil {
		return nil, err
	}
	earlier, err := cfg.loadLearned()
	if err != nil {
		return nil, err
	}
	if earlier != nil {
		l.Counts().Merge(earlier.Counts())
	}
	return &onlineLearner{Learner: l, written: time.Now()}, nil
}

// maybeLearn writes the learned model when it is due (always when final),
// and with learn.serve swaps the served model for the model of the file's
// counts plus the live ones. Learning and solving run outside the lock.
func (p *probProcessor) maybeLearn(ctx context.Context, final bool) {
	p.recordModelAge(ctx)
	if p.learner == nil {
		return
	}
	p.mu.Lock()
	now := p.now()
	if !final && now.Sub(p.learner.written) < p.cfg.Learn.interval() {
		p.mu.Unlock()
		return
	}
	p.learner.written = now
	live := p.learner.Snapshot()
	var base *dtmc.Counts
	if p.served != nil {
		base = p.served.base
	}
	p.mu.Unlock()

	if err := p.writeLearned(ctx, live); err != nil {
		p.tel.ModelWrites.Add(ctx, 1, metric.WithAttributes(attribute.String("result", "error")))
		p.warnOnce("learn-write", "writing learn.output failed; the previous file is intact", zap.String("output", p.cfg.Learn.Output), zap.Error(err))
		return
	}
	p.tel.ModelWrites.Add(ctx, 1, metric.WithAttributes(attribute.String("result", "ok")))
	if p.cfg.Learn.Serve && !final {
		p.serveLearned(ctx, base, live, now)
	}
}

// writeLearned writes the model of the live counts alone, atomically.
func (p *probProcessor) writeLearned(ctx context.Context, live *dtmc.Counts) error {
	m, err := dtmc.Learn(p.cfg.Spec(), live)
	if err != nil {
		return err
	}
	p.recordPAC(ctx, m, "learned")
	return m.WriteFile(p.cfg.Learn.Output)
}

// serveLearned makes the model of base plus live counts the served one.
func (p *probProcessor) serveLearned(ctx context.Context, base, live *dtmc.Counts, now time.Time) {
	counts := dtmc.NewCounts()
	if base != nil {
		counts.Merge(base)
	}
	counts.Merge(live)
	m, err := dtmc.Learn(p.cfg.Spec(), counts)
	var g *guard.Guard
	if err == nil {
		g, err = solve(p.cfg, m)
	}
	if err != nil {
		p.warnOnce("serve", "the learned model could not be served; the previous one stays", zap.Error(err))
		return
	}
	for _, note := range m.Notes() {
		p.warnOnce("serve-note-"+note, "served model: "+note)
	}
	p.recordPAC(ctx, m, "served")
	p.mu.Lock()
	p.served = &servedModel{guard: g, base: base, since: now}
	p.mu.Unlock()
}

// recordPAC sets the PAC gauge of a model.
func (p *probProcessor) recordPAC(ctx context.Context, m *dtmc.Model, which string) {
	sv, err := dtmc.NewSolver(dtmc.Options{})
	if err != nil {
		return
	}
	r, err := m.PAC(pacEpsilon, pacDelta, sv)
	if err != nil {
		return
	}
	var v int64
	if r.Certified {
		v = 1
	}
	p.tel.PACCertified.Record(ctx, v, metric.WithAttributes(attribute.String("model", which)))
}

// recordModelAge sets the model-age gauge.
func (p *probProcessor) recordModelAge(ctx context.Context) {
	p.mu.Lock()
	served := p.served
	now := p.now()
	p.mu.Unlock()
	if served != nil {
		p.tel.ModelAge.Record(ctx, now.Sub(served.since).Seconds())
	}
}
