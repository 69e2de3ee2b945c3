// SPDX-License-Identifier: Apache-2.0

package verdictlogs

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/connector/verdictlogs/internal/metadata"
	"github.com/agentguard/agentguard/extension/riskendpoint"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

// The audit trail's record: its event name, and the attributes it adds to
// the verdicts' (agentguard.group, agentguard.history).
const (
	decisionEvent        = "agentguard.decision"
	attrDecision         = "agentguard.decision"
	attrAction           = "agentguard.action"
	attrAfterSpanID      = "agentguard.after_span_id"
	attrStale            = "agentguard.stale"
	attrReasons          = "agentguard.reasons"
	attrDecisionDuration = "agentguard.decision.duration"
)

// followDecisions subscribes to the decisions of the extension named by the
// decisions setting.
func (c *verdictConnector) followDecisions(host component.Host) error {
	id := *c.cfg.Decisions
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return fmt.Errorf("decisions: no extension %q is running: configure it under extensions and list it in service::extensions", id)
	}
	log, ok := ext.(riskendpoint.DecisionLog)
	if !ok {
		return fmt.Errorf("decisions: extension %q does not answer decisions (it is a %s; a riskendpoint does)", id, id.Type())
	}
	c.stopFollowing = log.Follow(c.logDecision)
	return nil
}

// logDecision sends one decision down the logs pipeline as a record. A
// refusal there is logged once: the agent has its answer already, and the
// endpoint must not wait on a backend.
func (c *verdictConnector) logDecision(ctx context.Context, d riskendpoint.Decided) {
	logs := plog.NewLogs()
	sl := logs.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName(metadata.ScopeName)
	lr := sl.LogRecords().AppendEmpty()
	severity := decisionRecord(lr, d, pcommon.NewTimestampFromTime(c.now()))
	c.tel.Records.Add(ctx, 1, metric.WithAttributes(attribute.String(metadata.AttrCheck, metadata.CheckDecision), attribute.String(metadata.AttrSeverity, severity)))
	if err := c.next.ConsumeLogs(ctx, logs); err != nil {
		c.refusedOnce.Do(func() {
			c.logger.Warn("the logs pipeline refused a decision's record; the audit trail misses it (logged once)", zap.Error(err))
		})
	}
}

// decisionRecord fills lr with d and returns its severity text: WARN for a
// deny or a warn, INFO for an allow.
func decisionRecord(lr plog.LogRecord, d riskendpoint.Decided, observed pcommon.Timestamp) string {
	resp := d.Response
	lr.SetEventName(decisionEvent)
	lr.SetTimestamp(pcommon.NewTimestampFromTime(d.Time))
	lr.SetObservedTimestamp(observed)
	severity, number := metadata.SeverityInfo, plog.SeverityNumberInfo
	if resp.Decision != riskendpoint.Allow {
		severity, number = metadata.SeverityWarn, plog.SeverityNumberWarn
	}
	lr.SetSeverityText(severity)
	lr.SetSeverityNumber(number)
	lr.Body().SetStr(decisionText(d))
	a := lr.Attributes()
	a.PutStr(verdictattr.Group, d.Group)
	a.PutStr(attrDecision, resp.Decision)
	a.PutStr(attrAction, d.Action)
	if !d.AfterSpanID.IsEmpty() {
		a.PutStr(attrAfterSpanID, d.AfterSpanID.String())
	}
	a.PutBool(attrStale, resp.Stale)
	if resp.History != "" {
		a.PutStr(verdictattr.History, resp.History)
	}
	a.PutDouble(attrDecisionDuration, d.Took.Seconds())
	putReasons(a.PutEmptySlice(attrReasons), resp.Reasons)
	return severity
}

// decisionText is the record's body: the decision, the action and the
// explanations of the reasons that decided it.
func decisionText(d riskendpoint.Decided) string {
	var why []string
	for _, r := range d.Response.Reasons {
		if r.Effect == d.Response.Decision {
			why = append(why, r.Explanation)
		}
	}
	text := fmt.Sprintf("%s %s in group %q", d.Response.Decision, d.Action, d.Group)
	if len(why) > 0 {
		text += ": " + strings.Join(why, "; ")
	}
	return text
}

func putReasons(s pcommon.Slice, reasons []riskendpoint.Reason) {
	for _, r := range reasons {
		m := s.AppendEmpty().SetEmptyMap()
		m.PutStr("processor", r.Processor)
		if r.Assertion != "" {
			m.PutStr("assertion", r.Assertion)
		}
		putDouble(m, "p_safe", r.PSafe)
		putDouble(m, "p_safe_low", r.PSafeLow)
		putDouble(m, "p_safe_high", r.PSafeHigh)
		putDouble(m, "threshold", r.Threshold)
		m.PutStr("effect", r.Effect)
		m.PutStr("explanation", r.Explanation)
	}
}

// putDouble puts v at key, if there is one.
func putDouble(m pcommon.Map, key string, v *float64) {
	if v != nil {
		m.PutDouble(key, *v)
	}
}
