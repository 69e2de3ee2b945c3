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
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/verdictattr"
)

// The metrics the connector's traces-to-metrics side emits, and the
// attributes of their points. The service is a point attribute, not the
// resource: the exporters that map a resource to labels (prometheus: job,
// instance) would otherwise split a service's verdicts by whatever else its
// resource says (a pod, a host).
const (
	MetricVerdicts = "agentguard.verdicts"
	MetricPSafe    = "agentguard.p_safe"

	AttrCheck       = "check"
	AttrAssertion   = "assertion"
	AttrServiceName = "service.name"
	AttrLabel       = "label"
	AttrHistory     = "history"
	// AttrOverflow marks the one series that counts the verdicts of series
	// past metrics.max_series (the OpenTelemetry SDKs' name for it).
	AttrOverflow = "otel.metric.overflow"
)

// pSafeBounds are the P_safe histogram's bucket bounds: finer near 1, where
// the thresholds are.
var pSafeBounds = []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99}

// seriesKey names one series: no group, trace or conversation ID, so the
// series are at most checks × assertions × services × labels × history
// marks, however many conversations come.
type seriesKey struct {
	check, assertion, service, label, history string
	overflow                                  bool
}

// exemplar is the latest verdict of a series, linking its point to the span.
type exemplar struct {
	traceID pcommon.TraceID
	spanID  pcommon.SpanID
	at      pcommon.Timestamp
	value   float64
}

// counter is a verdict series' running total (cumulative: the total since
// the connector started).
type counter struct {
	start pcommon.Timestamp
	count int64
	last  exemplar
}

// histogram is a P_safe series' running distribution.
type histogram struct {
	start    pcommon.Timestamp
	count    uint64
	sum      float64
	min, max float64
	buckets  []uint64
	last     exemplar
}

// verdictMetrics counts verdicts into cumulative series. Cumulative, because
// Prometheus and most metrics backends want running totals; that needs the
// totals kept here, at most maxSeries of each metric: a verdict of a series
// past the bound is counted in the overflow series instead.
type verdictMetrics struct {
	cfg    *Config
	next   consumer.Metrics
	logger *zap.Logger
	now    func() time.Time

	mu           sync.Mutex
	counters     map[seriesKey]*counter
	histograms   map[seriesKey]*histogram
	overflowOnce sync.Once
}

func newVerdictMetrics(cfg *Config, next consumer.Metrics, logger *zap.Logger) *verdictMetrics {
	return &verdictMetrics{cfg: cfg, next: next, logger: logger, now: time.Now,
		counters: map[seriesKey]*counter{}, histograms: map[seriesKey]*histogram{}}
}

func (m *verdictMetrics) Start(context.Context, component.Host) error { return nil }
func (m *verdictMetrics) Shutdown(context.Context) error              { return nil }

func (m *verdictMetrics) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// ConsumeTraces counts the verdict events of td and emits the series they
// changed, with their totals; a batch without verdicts emits nothing.
func (m *verdictMetrics) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	md, n := m.count(td)
	if n == 0 {
		return nil
	}
	return m.next.ConsumeMetrics(ctx, md)
}

// count adds td's verdicts to the totals and returns the changed series as
// metrics. The points are stamped under the lock, so that of two batches
// counted at once the later total always has the later time (an exporter
// keeps the newest point of a series).
func (m *verdictMetrics) count(td ptrace.Traces) (pmetric.Metrics, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	changedCounters := map[seriesKey]*counter{}
	changedHistograms := map[seriesKey]*histogram{}
	for _, rs := range td.ResourceSpans().All() {
		service := stringOf(rs.Resource().Attributes(), AttrServiceName)
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				for _, ev := range span.Events().All() {
					if !m.wanted(ev) {
						continue
					}
					key := keyOf(ev, service)
					m.addVerdict(key, changedCounters, span, ev)
					if p, ok := ev.Attributes().Get(verdictattr.PSafe); ok && p.Type() == pcommon.ValueTypeDouble {
						key.label, key.history = "", ""
						m.addPSafe(key, changedHistograms, span, ev, p.Double())
					}
				}
			}
		}
	}
	return m.emit(changedCounters, changedHistograms), len(changedCounters)
}

// wanted: every verdict of the configured checks, passes too (passes only
// limits the log records): a count of passes is what a violation rate is
// measured against.
func (m *verdictMetrics) wanted(ev ptrace.SpanEvent) bool {
	if ev.Name() != verdictattr.EvaluationEvent {
		return false
	}
	check, ok := ev.Attributes().Get(verdictattr.Check)
	return ok && slices.Contains(m.cfg.Checks, check.Str())
}

// stringOf is attrs[key] as a string, "" when absent.
func stringOf(attrs pcommon.Map, key string) string {
	if v, ok := attrs.Get(key); ok {
		return v.AsString()
	}
	return ""
}

func keyOf(ev ptrace.SpanEvent, service string) seriesKey {
	get := func(k string) string { return stringOf(ev.Attributes(), k) }
	return seriesKey{check: get(verdictattr.Check), assertion: get(verdictattr.EvaluationName), service: service,
		label: get(verdictattr.ScoreLabel), history: get(verdictattr.History)}
}

func exemplarOf(span ptrace.Span, ev ptrace.SpanEvent, value float64) exemplar {
	return exemplar{traceID: span.TraceID(), spanID: span.SpanID(), at: ev.Timestamp(), value: value}
}

// bounded returns key, or the overflow series when key is new and the
// series are at the bound (logged once).
func (m *verdictMetrics) bounded(key seriesKey, known bool, n int) seriesKey {
	if known || n < m.cfg.Metrics.MaxSeries {
		return key
	}
	m.overflowOnce.Do(func() {
		m.logger.Warn("verdict metrics: more series than metrics.max_series; the verdicts of new series are counted in the series with otel.metric.overflow=true",
			zap.Int("max_series", m.cfg.Metrics.MaxSeries))
	})
	return seriesKey{overflow: true}
}

func (m *verdictMetrics) addVerdict(key seriesKey, changed map[seriesKey]*counter, span ptrace.Span, ev ptrace.SpanEvent) {
	_, known := m.counters[key]
	key = m.bounded(key, known, len(m.counters))
	c := m.counters[key]
	if c == nil {
		c = &counter{start: pcommon.NewTimestampFromTime(m.now())}
		m.counters[key] = c
	}
	c.count++
	c.last = exemplarOf(span, ev, 1)
	changed[key] = c
}

func (m *verdictMetrics) addPSafe(key seriesKey, changed map[seriesKey]*histogram, span ptrace.Span, ev ptrace.SpanEvent, p float64) {
	_, known := m.histograms[key]
	key = m.bounded(key, known, len(m.histograms))
	h := m.histograms[key]
	if h == nil {
		h = &histogram{start: pcommon.NewTimestampFromTime(m.now()), min: p, max: p, buckets: make([]uint64, len(pSafeBounds)+1)}
		m.histograms[key] = h
	}
	h.count++
	h.sum += p
	h.min, h.max = min(h.min, p), max(h.max, p)
	h.buckets[bucketOf(p)]++
	h.last = exemplarOf(span, ev, p)
	changed[key] = h
}

// bucketOf is the index of p's bucket: the first bound p does not exceed
// (upper bounds inclusive, as Prometheus's le).
func bucketOf(p float64) int {
	i, _ := slices.BinarySearch(pSafeBounds, p)
	return i
}
