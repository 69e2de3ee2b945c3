// SPDX-License-Identifier: Apache-2.0

//go:build e2e

// End-to-end: the collector runs in-process on the example's configuration
// and learned model; held-out episodes reach it as OTLP/JSON over HTTP; the
// risk warnings and violations come back as log records over OTLP/HTTP.
package e2e_test

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/test/e2e"
	"github.com/agentguard/agentguard/test/harness"
	"github.com/agentguard/agentguard/test/sim/household"
)

func post(t *testing.T, addr string, td ptrace.Traces) {
	body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e2e.Post(addr, body); err != nil {
		t.Fatal(err)
	}
}

// Every unsafe episode gets its violation record at the labelled tool call;
// most are warned before it; the safe ones that never leave the stove on are
// not warned.
func TestWarningsAndViolationsReachTheLogs(t *testing.T) {
	sink, err := harness.StartLogSink()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	t.Setenv("AGENTGUARD_HOUSEHOLD_MODEL", householdModel)
	addr := e2e.StartCollector(t, sink, householdConfig)
	eps := household.Generate(household.Options{Seed: 7, Start: time.Now()}, 20)
	for _, ep := range eps {
		post(t, addr, ep.Traces)
	}
	sink.WaitQuiet(1500*time.Millisecond, 20*time.Second)

	type seen struct{ risk, violation int64 }
	byEpisode := map[string]seen{}
	for _, r := range sink.Records() {
		a := r.Attributes().AsRaw()
		if a[verdictattr.Check] != verdictattr.CheckProb || r.SeverityText() != "WARN" {
			t.Errorf("record %v %s", a, r.SeverityText())
			continue
		}
		s := byEpisode[a[verdictattr.Group].(string)]
		event := a[verdictattr.EventNumber].(int64)
		switch {
		case a[verdictattr.Violation] == true && s.violation == 0:
			s.violation = event
		case a[verdictattr.ScoreLabel] == verdictattr.LabelRisk && s.risk == 0:
			s.risk = event
		}
		byEpisode[a[verdictattr.Group].(string)] = s
	}
	var unsafe, warnedInTime int
	for _, ep := range eps {
		s := byEpisode[ep.ID]
		switch {
		case ep.Unsafe:
			unsafe++
			if s.violation != int64(ep.UnsafeAt) {
				t.Errorf("%s: violation at event %d, unsafe at tool call %d", ep.ID, s.violation, ep.UnsafeAt)
			}
			if s.risk > 0 && s.risk < s.violation {
				warnedInTime++
			}
		case s.violation != 0:
			t.Errorf("%s: a violation in a safe episode", ep.ID)
		case !ep.LeftWithStoveOn && s.risk != 0:
			t.Errorf("%s: warned at event %d, but the stove was never left on", ep.ID, s.risk)
		}
	}
	if unsafe == 0 || warnedInTime*2 < unsafe {
		t.Errorf("warned in time %d of %d unsafe episodes", warnedInTime, unsafe)
	}
}
