// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"errors"
	"time"

	"go.opentelemetry.io/collector/component"
)

// Settings are the configuration fields of the holding stage, the same in
// both processors: each squashes them into its Config (so that they sit at
// its top level) and sets its own defaults.
type Settings struct {
	// GroupBy is trace_id; conversation (the first found of
	// sequence.ConversationKeys: GenAI's, OpenInference's, ADK's and
	// Traceloop's conversation or session ids); or an
	// attribute key: the events of all traces with the same value form one
	// group, in time order, across traces.
	GroupBy string `mapstructure:"group_by"`
	// Wait: a trace is complete this long after its last new span.
	Wait time.Duration `mapstructure:"wait"`
	// RootWait: ... or this long after its root span arrived (0: Wait only).
	RootWait time.Duration `mapstructure:"root_wait"`
	// GroupTimeout: a group ends this long after its last event; verdicts
	// it decides then go on a verdict span, since its spans have left.
	GroupTimeout time.Duration `mapstructure:"group_timeout"`
	// MaxTraces held at once; past it the oldest trace is judged and
	// released early. It also bounds the open groups: past it the least
	// recently active group is ended early (counted). Both are split evenly
	// among the workers.
	MaxTraces int `mapstructure:"max_traces"`
	// MaxSpansPerTrace held per trace; a larger trace is judged and
	// released early, and its later spans come as late.
	MaxSpansPerTrace int `mapstructure:"max_spans_per_trace"`
	// Workers judge groups in parallel, a group always on the same worker
	// (0: one per core).
	Workers int `mapstructure:"workers"`
	// Storage is a storage extension (file_storage/NAME): the open groups
	// are checkpointed to it every CheckpointInterval and at shutdown, and
	// restored from it at start, so that a restart goes on with every group
	// where it was. Unset: a shutdown ends every group, and a crash loses
	// them.
	Storage *component.ID `mapstructure:"storage"`
	// CheckpointInterval is how often the groups are checkpointed with
	// storage: a crash loses what came after the last one.
	CheckpointInterval time.Duration `mapstructure:"checkpoint_interval"`
	// WarmUp: after a start with evidence that history was lost, a group
	// first seen this long after it is marked agentguard.history: partial,
	// since its earlier traces may have gone with the previous process. The
	// evidence is a checkpoint behind (a crash's) or one that could not be
	// restored, so WarmUp applies only with storage (unset: group_timeout).
	// Without storage a restart cannot be told from a first start: unset
	// (or 0), nothing is marked; set, it marks after every start.
	WarmUp *time.Duration `mapstructure:"warm_up"`
	// Retention: a conversation that ended after group_timeout without a new
	// turn is kept (saved, about as much memory as in a checkpoint) this long,
	// so that a later turn continues it where it was; past it, one that comes
	// back starts afresh, marked partial (unset: DefaultRetention; 0: none is
	// kept). Kept groups count against max_traces and go into checkpoints.
	Retention *time.Duration `mapstructure:"retention"`
	// CompactAfter: a group with no new trace for this long is kept in its
	// saved form (as a checkpoint holds it, a few bytes an event) until its
	// next trace, a question about it or its end, which rebuild it by
	// replaying its events: an idle conversation then costs a fraction of
	// the memory (unset: DefaultCompactAfter; 0: never).
	CompactAfter *time.Duration `mapstructure:"compact_after"`
	// WarnUnheldAfter: a predicate that has not held in this many events in
	// a row is logged once at WARN, a misspelt tool or agent name being the
	// usual cause (0: never).
	WarnUnheldAfter int `mapstructure:"warn_unheld_after"`
	// WarnTyposAfter: this long after the first event, each predicate that
	// has not held once, and a group_by attribute no trace carried, is logged
	// once at WARN with the nearest name the spans carried, and counted
	// (unset: DefaultWarnTyposAfter; 0: never).
	WarnTyposAfter *time.Duration `mapstructure:"warn_typos_after"`
	// SendBatch: spans judged are passed on in batches of up to size spans,
	// each waiting at most timeout (unset: each batch judged is passed on at
	// once). Verdicts wait too: a verdicts pipeline behind this one sees
	// them up to timeout later.
	SendBatch SendBatch `mapstructure:"send_batch"`
}

// Check reports every field out of range, each named as in the
// configuration. (It is not named Validate: the collector would call it
// besides the processor's Validate, and report each error twice.)
func (s Settings) Check() error {
	var errs []error
	if s.GroupBy == "" {
		errs = append(errs, errors.New(`group_by: must be "trace_id", "conversation" or an attribute key`))
	}
	return errors.Join(append(errs, s.bounds().Validate(),
		NonNegativeInt("warn_unheld_after", s.WarnUnheldAfter), NonNegativeDuration("warm_up", s.warmUp()),
		NonNegativeDuration("retention", s.retention()), NonNegativeDuration("compact_after", s.compactAfter()),
		NonNegativeDuration("warn_typos_after", s.warnTyposAfter()),
		PositiveDuration("checkpoint_interval", s.CheckpointInterval), s.SendBatch.check())...)
}

// StageConfig is what the stage takes from the settings; the processor adds the
// rest (Late, OnArrival, Scope, ID, the callbacks).
func (s Settings) StageConfig() Config {
	return Config{Bounds: s.bounds(), GroupBy: s.GroupBy, WarnUnheldAfter: s.WarnUnheldAfter, WarmUp: s.warmUp(),
		Storage: s.Storage, CheckpointEvery: s.CheckpointInterval, Retention: s.retention(), CompactAfter: s.compactAfter(), WarnTyposAfter: s.warnTyposAfter(),
		SendBatch: s.SendBatch}
}

func (s Settings) bounds() Bounds {
	return Bounds{Wait: s.Wait, RootWait: s.RootWait, GroupTimeout: s.GroupTimeout,
		MaxTraces: s.MaxTraces, MaxSpansPerTrace: s.MaxSpansPerTrace, Workers: s.Workers}
}

// DefaultWarnTyposAfter is when a typo is looked for: a minute of traffic.
const DefaultWarnTyposAfter = time.Minute

func (s Settings) warnTyposAfter() time.Duration {
	if s.WarnTyposAfter == nil {
		return DefaultWarnTyposAfter
	}
	return *s.WarnTyposAfter
}

// DefaultRetention is how long an ended conversation is kept when retention
// is not set: a user who comes back within the hour continues it.
const DefaultRetention = time.Hour

// retention is retention, DefaultRetention when it is not set.
func (s Settings) retention() time.Duration {
	if s.Retention == nil {
		return DefaultRetention
	}
	return *s.Retention
}

// DefaultCompactAfter is how long a group is idle before it is kept in its
// saved form, when compact_after is not set: longer than the pause between
// the traces of one turn, shorter than most pauses between turns.
const DefaultCompactAfter = 10 * time.Second

// compactAfter is compact_after, DefaultCompactAfter when it is not set.
func (s Settings) compactAfter() time.Duration {
	if s.CompactAfter == nil {
		return DefaultCompactAfter
	}
	return *s.CompactAfter
}

// CompactAfterSet reports whether compact_after was set in the configuration.
func (s Settings) CompactAfterSet() bool { return s.CompactAfter != nil }

// RetentionSet reports whether retention was set in the configuration.
func (s Settings) RetentionSet() bool { return s.Retention != nil }

// warmUp is warm_up; unset, group_timeout with storage and 0 without.
func (s Settings) warmUp() time.Duration {
	switch {
	case s.WarmUp != nil:
		return *s.WarmUp
	case s.Storage != nil:
		return s.GroupTimeout
	}
	return 0
}
