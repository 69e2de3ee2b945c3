// SPDX-License-Identifier: Apache-2.0

package verdictlogs

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/connector/verdictlogs/internal/metadata"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

type verdictConnector struct {
	cfg    *Config
	next   consumer.Logs
	tel    *metadata.TelemetryBuilder
	logger *zap.Logger
	now    func() time.Time
	// stopFollowing ends the decisions' audit trail (the decisions setting).
	stopFollowing func()
	refusedOnce   sync.Once
}

func newConnector(cfg *Config, next consumer.Logs, tel *metadata.TelemetryBuilder, logger *zap.Logger) *verdictConnector {
	return &verdictConnector{cfg: cfg, next: next, tel: tel, logger: logger, now: time.Now}
}

// Start follows the decisions of the riskendpoint named by decisions, if set.
func (c *verdictConnector) Start(_ context.Context, host component.Host) error {
	if c.cfg.Decisions == nil {
		return nil
	}
	return c.followDecisions(host)
}

// Shutdown stops following the decisions.
func (c *verdictConnector) Shutdown(context.Context) error {
	if c.stopFollowing != nil {
		c.stopFollowing()
	}
	return nil
}

func (c *verdictConnector) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// ConsumeTraces turns the verdict events of td into log records: the resource
// copied, one scope per source scope; spans without verdicts give nothing.
func (c *verdictConnector) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	logs := plog.NewLogs()
	observed := pcommon.NewTimestampFromTime(c.now())
	for _, rs := range td.ResourceSpans().All() {
		out := resourceLogs{logs: logs, src: rs}
		for _, ss := range rs.ScopeSpans().All() {
			c.convertScope(ctx, &out, ss, observed)
		}
	}
	if logs.LogRecordCount() == 0 {
		return nil
	}
	return c.next.ConsumeLogs(ctx, logs)
}

func (c *verdictConnector) convertScope(ctx context.Context, out *resourceLogs, ss ptrace.ScopeSpans, observed pcommon.Timestamp) {
	var records plog.LogRecordSlice
	opened := false
	for _, span := range ss.Spans().All() {
		for _, ev := range span.Events().All() {
			if !c.wanted(ev) {
				continue
			}
			if !opened {
				records, opened = out.scope(ss), true
			}
			c.record(ctx, records.AppendEmpty(), span, ev, observed)
		}
	}
}

// resourceLogs opens the output of one source resource on its first record.
type resourceLogs struct {
	logs   plog.Logs
	src    ptrace.ResourceSpans
	rl     plog.ResourceLogs
	opened bool
}

func (r *resourceLogs) scope(ss ptrace.ScopeSpans) plog.LogRecordSlice {
	if !r.opened {
		r.rl, r.opened = r.logs.ResourceLogs().AppendEmpty(), true
		r.src.Resource().CopyTo(r.rl.Resource())
		r.rl.SetSchemaUrl(r.src.SchemaUrl())
	}
	sl := r.rl.ScopeLogs().AppendEmpty()
	ss.Scope().CopyTo(sl.Scope())
	sl.SetSchemaUrl(ss.SchemaUrl())
	return sl.LogRecords()
}

func (c *verdictConnector) wanted(ev ptrace.SpanEvent) bool {
	if ev.Name() != verdictattr.EvaluationEvent {
		return false
	}
	check, ok := ev.Attributes().Get(verdictattr.Check)
	if !ok || !slices.Contains(c.cfg.Checks, check.Str()) {
		return false
	}
	return c.cfg.Passes || isWarning(ev)
}

// isWarning: a violation, a risk or an unknown-state alert warns; a pass or
// an inconclusive verdict informs.
func isWarning(ev ptrace.SpanEvent) bool {
	label, _ := ev.Attributes().Get(verdictattr.ScoreLabel)
	switch label.Str() {
	case verdictattr.LabelFail, verdictattr.LabelRisk, verdictattr.LabelUnknownState:
		return true
	}
	return false
}

func (c *verdictConnector) record(ctx context.Context, lr plog.LogRecord, span ptrace.Span, ev ptrace.SpanEvent, observed pcommon.Timestamp) {
	lr.SetEventName(verdictattr.EvaluationEvent)
	lr.SetTraceID(span.TraceID())
	lr.SetSpanID(span.SpanID())
	lr.SetTimestamp(ev.Timestamp())
	lr.SetObservedTimestamp(observed)
	severity := metadata.SeverityInfo
	lr.SetSeverityNumber(plog.SeverityNumberInfo)
	if isWarning(ev) {
		severity = metadata.SeverityWarn
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
	}
	lr.SetSeverityText(severity)
	if explanation, ok := ev.Attributes().Get(verdictattr.Explanation); ok {
		lr.Body().SetStr(explanation.Str())
	}
	ev.Attributes().CopyTo(lr.Attributes())
	lr.Attributes().PutStr(verdictattr.SpanName, span.Name())
	check, _ := ev.Attributes().Get(verdictattr.Check)
	c.tel.Records.Add(ctx, 1, metric.WithAttributes(attribute.String(metadata.AttrCheck, check.Str()), attribute.String(metadata.AttrSeverity, severity)))
}
