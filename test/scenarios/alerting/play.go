// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/test/harness"
	"github.com/agentguard/agentguard/test/sim/household"
	"github.com/agentguard/agentguard/test/sim/weather"
)

// result is one alert's way from its offending span to the webhook.
type result struct {
	alert, assertion, service string
	took, bound               time.Duration
}

// expected is an alert the play must page, and the verdict behind it.
type expected struct {
	alert  string
	labels map[string]string
	check  string
	sent   time.Time
	bound  time.Duration
}

// householdSeed gives episodes the model was not learned on (seed 1).
const householdSeed = 7

// playAndWait plays the keeps-control conversation and an unsafe household
// episode, then waits for each one's alert and checks its trace link.
func (s *stack) playAndWait(o options) ([]result, error) {
	weatherSent, err := s.playWeather()
	if err != nil {
		return nil, err
	}
	householdSent, err := s.playHousehold()
	if err != nil {
		return nil, err
	}
	want := []expected{
		{alert: "AgentguardAssertionViolated", labels: map[string]string{"assertion": "te1", "service_name": "weather_agent_team"},
			check: verdictattr.CheckTemporal, sent: weatherSent, bound: o.bound(o.temporalVerdictDelay())},
		{alert: "AgentguardRiskWarning", labels: map[string]string{"assertion": "always_safe", "service_name": household.ServiceName, "label": verdictattr.LabelRisk},
			check: verdictattr.CheckProb, sent: householdSent, bound: o.bound(0)},
	}
	var results []result
	for _, w := range want {
		r, err := s.await(w)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, nil
}

// playWeather sends one conversation whose greeting agent keeps control,
// through the OpenTelemetry SDK; it returns when its last span was sent.
func (s *stack) playWeather() (time.Time, error) {
	convs := weather.Conversations(0, 0, 1, 1)
	if err := weather.Export(context.Background(), s.otlp, convs, true); err != nil {
		return time.Time{}, fmt.Errorf("%w%s", err, s.orExit())
	}
	return time.Now(), nil
}

// playHousehold sends the first unsafe episode of the seed, as one OTLP/JSON
// request; it returns when the receiver accepted it.
func (s *stack) playHousehold() (time.Time, error) {
	for _, ep := range household.Generate(household.Options{Seed: householdSeed, Start: time.Now()}, 50) {
		if !ep.Unsafe {
			continue
		}
		body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(ep.Traces)
		if err != nil {
			return time.Time{}, err
		}
		at, err := harness.PostTraces(s.otlp, "application/json", body)
		if err != nil {
			return time.Time{}, fmt.Errorf("posting %s: %w%s", ep.ID, err, s.orExit())
		}
		return at, nil
	}
	return time.Time{}, fmt.Errorf("no unsafe episode among 50 of seed %d", householdSeed)
}

func (s *stack) orExit() string {
	if err := s.col.Alive(); err != nil {
		return "\n" + err.Error()
	}
	return ""
}

// await waits for w's alert within its bound, then checks that its trace
// link leads to a span that carries the verdict (a verdict log record's).
func (s *stack) await(w expected) (result, error) {
	a, ok := s.hook.waitFor(w.alert, w.labels, time.Until(w.sent.Add(w.bound)))
	if !ok {
		return result{}, fmt.Errorf("no %s %v at the webhook within %v of the offending span%s (logs in %s)",
			w.alert, w.labels, w.bound, s.orExit(), s.prom.log)
	}
	r := result{alert: w.alert, assertion: a.Labels["assertion"], service: a.Labels["service_name"], took: a.received.Sub(w.sent), bound: w.bound}
	if r.took > w.bound {
		return r, fmt.Errorf("%s came %v after its span, beyond the bound %v", w.alert, r.took, w.bound)
	}
	return r, s.checkTraceLink(a, w)
}

// checkTraceLink follows the alert's traces annotation and requires one of
// the trace and span IDs it lists to be a verdict's of the same check and
// assertion, as its log record says.
func (s *stack) checkTraceLink(a alert, w expected) error {
	link := a.Annotations["traces"]
	if link == "" {
		return fmt.Errorf("%s carries no traces link: %v", w.alert, a.Annotations)
	}
	ids, err := exemplarsAt(link)
	if err != nil {
		return fmt.Errorf("%s's traces link %s: %w", w.alert, link, err)
	}
	verdicts := map[[2]string]bool{}
	for _, r := range s.sink.Records() {
		check, _ := r.Attributes().Get(verdictattr.Check)
		name, _ := r.Attributes().Get(verdictattr.EvaluationName)
		if check.Str() == w.check && name.Str() == w.labels["assertion"] {
			verdicts[[2]string{r.TraceID().String(), r.SpanID().String()}] = true
		}
	}
	for _, id := range ids {
		if verdicts[id] {
			fmt.Printf("%s %v: trace link %s → trace %s, span %s\n", w.alert, w.labels, link, id[0], id[1])
			return nil
		}
	}
	return fmt.Errorf("%s's traces link %s lists %v, none a span of a %s verdict (%d records)", w.alert, link, ids, w.labels["assertion"], len(verdicts))
}
