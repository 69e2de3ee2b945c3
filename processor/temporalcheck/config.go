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

// GroupByTrace makes each trace a sequence of its own.
const GroupByTrace = sequence.ByTraceID

// Config of the temporalcheck processor.
type Config struct {
	// Predicates and the events condition (see the predicate package): the
	// names temporal expressions use, and which spans are sampling events.
	predicate.Config `mapstructure:",squash"`
	// GroupBy is trace_id (default); conversation (the first found of
	// gen_ai.conversation.id, session.id, gcp.vertex.agent.session_id); or an
	// attribute key: the events of all traces with the same value form one
	// sequence, in time order, across traces.
	GroupBy string `mapstructure:"group_by"`
	// Assertions to check over every group's sequence.
	Assertions []assertion.Config `mapstructure:"assertions"`
	// Report: violations (default) or all.
	Report Report `mapstructure:"report"`
	// Wait: a trace is complete this long after its last new span (default 10s).
	Wait time.Duration `mapstructure:"wait"`
	// RootWait: ... or this long after its root span arrived (default 1s; 0: Wait only).
	RootWait time.Duration `mapstructure:"root_wait"`
	// GroupTimeout: with an attribute group_by, a group ends this long after
	// its last trace was released (default 5m). Its end-of-sequence verdicts
	// (on_end) then go on a verdict span, a child of its last event, since
	// its spans have left.
	GroupTimeout time.Duration `mapstructure:"group_timeout"`
	// MaxTraces held at once (default 100000); past it the oldest trace is
	// evaluated and released early. It also bounds the open groups: past it
	// the least recently active group is ended early (counted, and its
	// end-of-sequence verdicts reported). Both are split evenly among the
	// workers.
	MaxTraces int `mapstructure:"max_traces"`
	// MaxSpansPerTrace held per trace (default 10000); a larger trace is
	// evaluated and released early, and its later spans pass as late.
	MaxSpansPerTrace int `mapstructure:"max_spans_per_trace"`
	// MaxEventsPerGroup: a group's sequence is ended (on_end applies) and a
	// new one begun when it reaches this many events (default 10000).
	MaxEventsPerGroup int `mapstructure:"max_events_per_group"`
	// MaxThreads caps the live evaluations of one assertion in one group
	// (default 100000); past it they are abandoned with an error verdict.
	MaxThreads int `mapstructure:"max_threads"`
	// Workers evaluate groups in parallel, a conversation always on the same
	// worker (default 0: one per core).
	Workers int `mapstructure:"workers"`
	// Storage is a storage extension (file_storage/NAME): the open groups
	// are checkpointed to it every CheckpointInterval and at shutdown, and
	// restored from it at start, so that a restart goes on with every
	// conversation where it was. Unset: a shutdown ends every group, and a
	// crash loses them.
	Storage *component.ID `mapstructure:"storage"`
	// CheckpointInterval is how often the groups are checkpointed with
	// storage (default 10s): a crash loses what came after the last one.
	CheckpointInterval time.Duration `mapstructure:"checkpoint_interval"`
	// WarmUp: a group first seen this long after a start is marked
	// agentguard.history: partial, since its earlier traces may have gone
	// with the previous process (default: group_timeout; 0: never). A start
	// that restored a complete checkpoint (storage) marks none.
	WarmUp *time.Duration `mapstructure:"warm_up"`
	// WarnUnheldAfter: a predicate that has not held in this many events in a
	// row is logged once at WARN, a misspelt tool or agent name being the
	// usual cause (default 1000; 0: never).
	WarnUnheldAfter int `mapstructure:"warn_unheld_after"`
}

func createDefaultConfig() *Config {
	return &Config{
		GroupBy:            GroupByTrace,
		Report:             ReportViolations,
		Wait:               10 * time.Second,
		RootWait:           time.Second,
		GroupTimeout:       5 * time.Minute,
		MaxTraces:          100_000,
		MaxSpansPerTrace:   10_000,
		MaxEventsPerGroup:  10_000,
		MaxThreads:         texpr.DefaultMaxThreads,
		WarnUnheldAfter:    1000,
		CheckpointInterval: 10 * time.Second,
	}
}

// Validate checks everything but the OTTL syntax, which is compiled when the
// processor is created (and fails it, so nothing starts).
func (c *Config) Validate() error {
	var errs []error
	if c.GroupBy == "" {
		errs = append(errs, errors.New(`group_by: must be "trace_id" or an attribute key`))
	}
	if c.Report != ReportViolations && c.Report != ReportAll {
		errs = append(errs, fmt.Errorf("report: unknown value %q: valid values are %q and %q", c.Report, ReportViolations, ReportAll))
	}
	errs = append(errs, c.bounds().Validate(),
		stage.PositiveInt("max_events_per_group", c.MaxEventsPerGroup), stage.PositiveInt("max_threads", c.MaxThreads),
		stage.NonNegativeInt("warn_unheld_after", c.WarnUnheldAfter), stage.NonNegativeDuration("warm_up", c.warmUp()),
		stage.PositiveDuration("checkpoint_interval", c.CheckpointInterval))
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

// bounds are the waits and limits of holding traces.
func (c *Config) bounds() stage.Bounds {
	return stage.Bounds{Wait: c.Wait, RootWait: c.RootWait, GroupTimeout: c.GroupTimeout,
		MaxTraces: c.MaxTraces, MaxSpansPerTrace: c.MaxSpansPerTrace, Workers: c.Workers}
}

// warmUp is warm_up, group_timeout when it is not set.
func (c *Config) warmUp() time.Duration {
	if c.WarmUp == nil {
		return c.GroupTimeout
	}
	return *c.WarmUp
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
