// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/test/harness"
	"github.com/agentguard/agentguard/test/sim/household"
)

// episodes are household episodes starting now, from a seed the model was
// not learned on.
func episodes(n int, seed int64, start time.Time) []household.Episode {
	return household.Generate(household.Options{Seed: seed, Start: start}, n)
}

// post sends each episode's trace as OTLP/JSON over HTTP, as an OTLP/HTTP
// exporter would.
func post(addr string, eps []household.Episode) error {
	var m ptrace.JSONMarshaler
	for _, ep := range eps {
		body, err := m.MarshalTraces(ep.Traces)
		if err != nil {
			return err
		}
		if _, err := harness.PostTraces(addr, "application/json", body); err != nil {
			return fmt.Errorf("posting %s: %w", ep.ID, err)
		}
	}
	return nil
}

// warning is the first risk and the violation probguard reported in one
// episode.
type warning struct {
	riskAt, unsafeAt int // event numbers, 0 for none
	pSafe            float64
	explanation      string
}

func warningsByEpisode(recs []plog.LogRecord) map[string]warning {
	out := map[string]warning{}
	for _, r := range recs {
		a := r.Attributes().AsRaw()
		group, _ := a[verdictattr.Group].(string)
		event, _ := a[verdictattr.EventNumber].(int64)
		w := out[group]
		switch {
		case a[verdictattr.Violation] == true:
			if w.unsafeAt == 0 {
				w.unsafeAt = int(event)
			}
		case a[verdictattr.ScoreLabel] == verdictattr.LabelRisk && w.riskAt == 0:
			w.riskAt, w.explanation = int(event), r.Body().Str()
			w.pSafe, _ = a[verdictattr.PSafe].(float64)
		}
		out[group] = w
	}
	return out
}

// summarizeHousehold prints, per episode, what happened and what probguard
// warned, then the first warning in full.
func summarizeHousehold(w io.Writer, eps []household.Episode, recs []plog.LogRecord) {
	warned := warningsByEpisode(recs)
	var unsafe, inTime, safe, falseAlarms int
	first := ""
	for _, ep := range eps {
		wn := warned[ep.ID]
		truth := "safe"
		if ep.LeftWithStoveOn {
			truth = "safe (left the stove on, back in time)"
		}
		if ep.Unsafe {
			truth = fmt.Sprintf("unsafe at tool call %d", ep.UnsafeAt)
			unsafe++
		} else {
			safe++
		}
		report := "no warning"
		if wn.riskAt > 0 {
			report = fmt.Sprintf("risk at tool call %d, P(stay safe) = %.3f", wn.riskAt, wn.pSafe)
			if first == "" {
				first = wn.explanation
			}
		}
		switch {
		case ep.Unsafe && wn.riskAt > 0 && wn.riskAt < ep.UnsafeAt:
			inTime++
			report += fmt.Sprintf(": %d calls ahead", ep.UnsafeAt-wn.riskAt)
		case !ep.Unsafe && wn.riskAt > 0:
			falseAlarms++
		}
		fmt.Fprintf(w, "  %s  %-40s %s\n", ep.ID, truth, report)
	}
	fmt.Fprintf(w, "\n%d probguard log records; unsafe episodes warned in time: %d of %d; safe episodes warned: %d of %d\n",
		len(recs), inTime, unsafe, falseAlarms, safe)
	if first != "" {
		fmt.Fprintf(w, "\nfirst risk warning, as the log record's body says:\n%s", indent(first))
	}
}
