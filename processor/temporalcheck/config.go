// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/pattern"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/core/texpr"
	"github.com/agentguard/agentguard/internal/stage"
)

// Report says which verdicts are written on spans.
type Report string

const (
	// ReportViolations annotates violations (and thread-cap errors) only.
	ReportViolations Report = "violations"
	// ReportAll also annotates passes and inconclusive verdicts.
	ReportAll Report = "all"
)

// Judge says when spans are judged.
type Judge string

const (
	// JudgeWhenComplete holds each trace until it is complete.
	JudgeWhenComplete Judge = "when_complete"
	// JudgeOnArrival judges each batch as it arrives.
	JudgeOnArrival Judge = "on_arrival"
)

// GroupByTrace makes each trace a sequence of its own.
const GroupByTrace = sequence.ByTraceID

// Config of the temporalcheck processor.
type Config struct {
	// Predicates and the events condition (see the predicate package): the
	// names temporal expressions use, and which spans are sampling events.
	predicate.Config `mapstructure:",squash"`
	// The holding stage's fields (group_by, wait, root_wait, group_timeout,
	// max_traces, max_spans_per_trace, workers, storage, checkpoint_interval,
	// warm_up, warn_unheld_after), with this processor's defaults below.
	stage.Settings `mapstructure:",squash"`
	// Assertions to check over every group's sequence.
	Assertions []assertion.Config `mapstructure:"assertions"`
	// Report: violations (default) or all.
	Report Report `mapstructure:"report"`
	// MaxEventsPerGroup: a group's sequence is ended (on_end applies) and a
	// new one begun when it reaches this many events (default 10000).
	MaxEventsPerGroup int `mapstructure:"max_events_per_group"`
	// MaxThreads caps the live evaluations of one assertion in one group
	// (default 100000); past it they are abandoned with an error verdict.
	MaxThreads int `mapstructure:"max_threads"`
	// Judge: when_complete (default) holds each trace until wait or
	// root_wait says it is complete and judges its events in start order;
	// on_arrival judges each batch as it arrives, once its trace's group is
	// known, as probguard's score: on_arrival does, so that an agent asking
	// the risk endpoint after a flush is answered on everything it flushed.
	// A span that comes after a later-starting event of its group was judged
	// is judged as the continuation and marks the group out_of_order; a
	// trace's group stays open until group_timeout, so its end-of-sequence
	// verdicts come then.
	Judge Judge `mapstructure:"judge"`
	// RiskEndpoint is the component ID of a riskendpoint extension (listed
	// in service::extensions) that asks this processor's assertions before
	// an agent acts: what the proposed action would decide. Unset: none.
	RiskEndpoint *component.ID `mapstructure:"risk_endpoint"`
}

func createDefaultConfig() *Config {
	return &Config{
		Settings: stage.Settings{
			GroupBy:            GroupByTrace,
			Wait:               10 * time.Second,
			RootWait:           time.Second,
			GroupTimeout:       5 * time.Minute,
			MaxTraces:          100_000,
			MaxSpansPerTrace:   10_000,
			WarnUnheldAfter:    1000,
			CheckpointInterval: 10 * time.Second,
		},
		Report:            ReportViolations,
		Judge:             JudgeWhenComplete,
		MaxEventsPerGroup: 10_000,
		MaxThreads:        texpr.DefaultMaxThreads,
	}
}

// Validate checks everything but the OTTL syntax, which is compiled when the
// processor is created (and fails it, so nothing starts).
func (c *Config) Validate() error {
	errs := []error{c.Settings.Check()}
	if c.Judge != JudgeWhenComplete && c.Judge != JudgeOnArrival {
		errs = append(errs, fmt.Errorf("judge: unknown value %q: valid values are %q and %q", c.Judge, JudgeWhenComplete, JudgeOnArrival))
	}
	if c.Report != ReportViolations && c.Report != ReportAll {
		errs = append(errs, fmt.Errorf("report: unknown value %q: valid values are %q and %q", c.Report, ReportViolations, ReportAll))
	}
	errs = append(errs, stage.PositiveInt("max_events_per_group", c.MaxEventsPerGroup), stage.PositiveInt("max_threads", c.MaxThreads))
	if len(c.Assertions) == 0 {
		errs = append(errs, errors.New("assertions: at least one assertion is required"))
	}
	if _, err := assertion.Compile(c.Assertions, c.predicateNames(), c.MaxThreads); err != nil {
		errs = append(errs, err)
	}
	for _, a := range c.Assertions {
		if len(a.Pattern) > 0 && c.MaxEventsPerGroup > pattern.Horizon {
			errs = append(errs, fmt.Errorf("max_events_per_group %d: assertion %q is a pattern, which waits at most %d events: set at most that",
				c.MaxEventsPerGroup, a.Name, pattern.Horizon))
			break
		}
	}
	return errors.Join(errs...)
}

func (c *Config) predicateNames() []string {
	names := make([]string, len(c.Predicates))
	for i, p := range c.Predicates {
		names[i] = p.Name
	}
	return names
}

// fingerprint is a digest of what a group's saved state depends on: the
// predicates (its events' bits), the grouping, the assertions and the
// bounds a replay obeys. A checkpoint written under another is not
// restored.
func (c *Config) fingerprint() (string, error) {
	data, err := json.Marshal(struct {
		Predicates predicate.Config
		GroupBy    string
		Assertions []assertion.Config
		Report     Report
		MaxEvents  int
		MaxThreads int
	}{c.Config, c.GroupBy, c.Assertions, c.Report, c.MaxEventsPerGroup, c.MaxThreads})
	if err != nil {
		return "", fmt.Errorf("storage: the configuration's fingerprint: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
