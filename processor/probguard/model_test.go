// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// createUnstarted creates the processor without starting its clock, so that
// nothing but the test writes the learned model.
func createUnstarted(t *testing.T, cfg *Config, set processor.Settings) *probProcessor {
	t.Helper()
	pt, err := NewFactory().CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return pt.(*probProcessor)
}

// certifiedMark is a PAC status the stove models never have (30 traces
// certify nothing): a gauge showing it was recorded from the stored status,
// not computed again.
var certifiedMark = pacStatus{known: true, certified: true}

const (
	servedPAC  = "otelcol_processor_probguard_pac_certified{model=served}"
	learnedPAC = "otelcol_processor_probguard_pac_certified{model=learned}"
)

// The served model's PAC status is computed with its solve, at creation;
// Start records it and solves nothing.
func TestStartRecordsThePACStatusOfCreation(t *testing.T) {
	set, reader := meteredSettings()
	p := createUnstarted(t, stoveConfig(t), set)
	if p.served.Load().pac != (pacStatus{known: true}) {
		t.Fatalf("PAC status at creation %+v, want known and not certified", p.served.Load().pac)
	}
	p.served.Load().pac = certifiedMark
	if err := p.Start(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	shutdown(t, p)
	if got := metricsOf(t, reader)[servedPAC]; got != 1 {
		t.Errorf("served PAC gauge %v after Start: computed again, not the status of creation", got)
	}
}

// A learn write with no new counts since the last one writes the same model
// and records its stored status: no learning, no solve. New counts make a
// new model, solved once for serving and its gauge.
func TestLearnWritesSolveOnlyNewCounts(t *testing.T) {
	set, reader := meteredSettings()
	cfg := stoveConfig(t)
	cfg.Learn = &LearnConfig{Output: filepath.Join(t.TempDir(), "online.json"), Serve: true}
	p := createUnstarted(t, cfg, set)
	defer shutdown(t, p)
	write := func() {
		p.learner.written = time.Time{} // due
		p.maybeLearn(t.Context(), false)
	}
	end := func(n int) { // a trace scored and its group ended
		feed(t, p, fixtures.V2Trace(n))
		p.Tick(time.Now().Add(2 * time.Minute))
	}

	// No traffic, no earlier learn.output: the served model stays the file's.
	fileGuard := p.served.Load().guard
	write()
	if p.served.Load().guard != fileGuard || p.learner.last == nil {
		t.Fatalf("served model replaced (%v) or nothing learned (%v) without a count", p.served.Load().guard != fileGuard, p.learner.last == nil)
	}

	end(0)
	write()
	learned, served := p.learner.last, p.served.Load()
	if served.guard == fileGuard || learned.Counts().Traces() != 1 || served.guard.Model().Counts().Traces() != 31 {
		t.Fatalf("after one trace: learned %d traces, served %d", learned.Counts().Traces(), served.guard.Model().Counts().Traces())
	}
	if want := pacOf(served.guard.Model(), nil); served.pac != want {
		t.Errorf("served PAC status %+v, its model's is %+v", served.pac, want)
	}

	p.learner.lastPAC, p.served.Load().pac = certifiedMark, certifiedMark
	write()
	got := metricsOf(t, reader)
	if p.learner.last != learned || p.served.Load().guard != served.guard || got[learnedPAC] != 1 || got[servedPAC] != 1 {
		t.Errorf("no new count: learned again %v, solved again %v, gauges learned %v served %v (want the stored 1)",
			p.learner.last != learned, p.served.Load().guard != served.guard, got[learnedPAC], got[servedPAC])
	}
	if !p.served.Load().since.After(served.since) {
		t.Error("the served model's age did not restart at the write")
	}

	end(1)
	write()
	got = metricsOf(t, reader)
	if p.learner.last == learned || p.served.Load().guard == served.guard || got[learnedPAC] != 0 || got[servedPAC] != 0 {
		t.Errorf("a new count: learned again %v, solved again %v, gauges learned %v served %v (want 0)",
			p.learner.last != learned, p.served.Load().guard != served.guard, got[learnedPAC], got[servedPAC])
	}
}
