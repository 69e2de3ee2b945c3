// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/processor/probguard/internal/metadata"
)

// The PAC status in the self-metrics is for these ε and δ.
const pacEpsilon, pacDelta = 0.1, 0.05

// servedModel is the model events are scored against, with its property
// solved and its PAC status computed once, when it was made: Start and the
// learn writes record that status and solve nothing again.
type servedModel struct {
	guard *guard.Guard
	pac   pacStatus
	base  *dtmc.Counts // the model file's counts, which serve adds to
	live  *dtmc.Counts // the live counts added to base (none for the model file)
	since time.Time    // when the model was written
}

// loadServed reads the model file, checks it against the configuration and
// solves it: the one time the processor reads it (Validate reads no file).
func loadServed(cfg *Config) (*servedModel, error) {
	m, written, err := readModel(cfg.Model)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if err := cfg.Matches(m, cfg.Model); err != nil {
		return nil, err
	}
	s, err := newServed(cfg, m, m.Counts(), dtmc.NewCounts(), written)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", cfg.Model, err)
	}
	return s, nil
}

// readModel reads a model file and, from the same open file, when it was
// last written.
func readModel(path string) (*dtmc.Model, time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	m, err := dtmc.ReadModel(f, path)
	return m, info.ModTime(), err
}

// newServed solves the configured property on m and computes m's PAC
// status, with one solver: everything serving m and its gauge need.
func newServed(cfg *Config, m *dtmc.Model, base, live *dtmc.Counts, since time.Time) (*servedModel, error) {
	sv, err := dtmc.NewSolver(dtmc.Options{})
	if err != nil {
		return nil, err
	}
	g, err := guard.New(m, cfg.GuardOptions(), sv)
	if err != nil {
		return nil, err
	}
	return &servedModel{guard: g, pac: pacOf(m, sv), base: base, live: live, since: since}, nil
}

// pacStatus is a model's PAC certification at pacEpsilon and pacDelta.
// Unknown (the zero value): it could not be computed, say for a property
// without an unsafe formula, and no gauge is recorded.
type pacStatus struct{ known, certified bool }

// pacOf computes m's PAC status; sv may be nil.
func pacOf(m *dtmc.Model, sv *dtmc.Solver) pacStatus {
	if sv == nil {
		var err error
		if sv, err = dtmc.NewSolver(dtmc.Options{}); err != nil {
			return pacStatus{}
		}
	}
	r, err := m.PAC(pacEpsilon, pacDelta, sv)
	if err != nil {
		return pacStatus{}
	}
	return pacStatus{known: true, certified: r.Certified}
}

// record sets the PAC gauge of the model named which (metadata.ModelServed
// or metadata.ModelLearned).
func (s pacStatus) record(ctx context.Context, tel *metadata.TelemetryBuilder, which string) {
	if !s.known {
		return
	}
	var v int64
	if s.certified {
		v = 1
	}
	tel.PACCertified.Record(ctx, v, metric.WithAttributes(attribute.String(metadata.AttrModel, which)))
}

// onlineLearner counts the live traffic.
type onlineLearner struct {
	*guard.Learner
	written time.Time // when learn.output was last written
	// last is the model learn.output was last made from, with its PAC
	// status: a write with no new counts since writes it again as it is.
	last    *dtmc.Model
	lastPAC pacStatus
}

// newOnlineLearner starts from the counts learn.output already holds, so
// that a restart goes on counting instead of overwriting them.
func newOnlineLearner(cfg *Config) (*onlineLearner, error) {
	l, err := guard.NewLearner(cfg.Spec())
	if err != nil {
		return nil, err
	}
	earlier, err := loadLearned(cfg)
	if err != nil {
		return nil, err
	}
	if earlier != nil {
		l.Counts().Merge(earlier.Counts())
	}
	return &onlineLearner{Learner: l, written: time.Now()}, nil
}

// loadLearned reads learn.output if it exists (nil if not): a model of the
// same abstraction, whose counts online learning goes on from.
func loadLearned(cfg *Config) (*dtmc.Model, error) {
	f, err := os.Open(cfg.Learn.Output)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("learn.output: %w", err)
	}
	defer f.Close()
	m, err := dtmc.ReadModel(f, cfg.Learn.Output)
	if err == nil {
		err = cfg.Matches(m, cfg.Learn.Output)
	}
	if err != nil {
		return nil, fmt.Errorf("learn.output holds counts to go on from, but: %w", err)
	}
	return m, nil
}

// maybeLearn writes the learned model when it is due (always when final),
// and with learn.serve swaps the served model for the model of the file's
// counts plus the live ones. Learning and solving run outside the lock, and
// only when the live counts changed since the last write.
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
	last, lastPAC := p.learner.last, p.learner.lastPAC
	served := p.served.Load()
	p.mu.Unlock()

	if err := p.writeLearned(ctx, live, last, lastPAC); err != nil {
		p.tel.ModelWrites.Add(ctx, 1, metric.WithAttributes(attribute.String(metadata.AttrResult, metadata.ResultError)))
		p.warnOnce("learn-write", "writing learn.output failed; the previous file is intact", zap.String("output", p.cfg.Learn.Output), zap.Error(err))
		return
	}
	p.tel.ModelWrites.Add(ctx, 1, metric.WithAttributes(attribute.String(metadata.AttrResult, metadata.ResultOK)))
	if p.cfg.Learn.Serve && !final && served != nil {
		p.serveLearned(ctx, served, live, now)
	}
}

// writeLearned writes the model of the live counts alone, atomically. When
// they are the counts of last, the model written before, it writes last
// again: nothing is learned or solved.
func (p *probProcessor) writeLearned(ctx context.Context, live *dtmc.Counts, last *dtmc.Model, lastPAC pacStatus) error {
	m, pac := last, lastPAC
	if last == nil || !last.Counts().Equal(live) {
		var err error
		if m, err = dtmc.Learn(p.cfg.Spec(), live); err != nil {
			return err
		}
		pac = pacOf(m, nil)
		p.mu.Lock()
		p.learner.last, p.learner.lastPAC = m, pac
		p.mu.Unlock()
	}
	pac.record(ctx, p.tel, metadata.ModelLearned)
	return m.WriteFile(p.cfg.Learn.Output)
}

// serveLearned makes the model of the model file's counts plus the live ones
// the served one, solved once for scoring and the PAC gauge together. With
// the same live counts as the served model's, it is that model again: only
// its age restarts.
func (p *probProcessor) serveLearned(ctx context.Context, cur *servedModel, live *dtmc.Counts, now time.Time) {
	next := *cur
	next.since = now
	if !cur.live.Equal(live) {
		counts := dtmc.NewCounts()
		counts.Merge(cur.base)
		counts.Merge(live)
		m, err := dtmc.Learn(p.cfg.Spec(), counts)
		var s *servedModel
		if err == nil {
			s, err = newServed(p.cfg, m, cur.base, live, now)
		}
		if err != nil {
			p.warnOnce("serve", "the learned model could not be served; the previous one stays", zap.Error(err))
			return
		}
		for _, note := range m.Notes() {
			p.warnOnce("serve-note-"+note, "served model: "+note)
		}
		next = *s
	}
	next.pac.record(ctx, p.tel, metadata.ModelServed)
	p.served.Store(&next)
}

// recordPAC sets the PAC gauge of m, the served model, from the status
// computed when it was solved: it solves nothing. Start records it so.
func (p *probProcessor) recordPAC(ctx context.Context, m *dtmc.Model, which string) {
	if served := p.served.Load(); served != nil && served.guard.Model() == m {
		served.pac.record(ctx, p.tel, which)
	}
}

// recordModelAge sets the model-age gauge.
func (p *probProcessor) recordModelAge(ctx context.Context) {
	if served := p.served.Load(); served != nil {
		now := p.now()
		p.tel.ModelAge.Record(ctx, now.Sub(served.since).Seconds())
	}
}
