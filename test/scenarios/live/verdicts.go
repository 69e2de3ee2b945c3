// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/test/harness"
)

// verdict is what the collector and check must agree on.
type verdict struct {
	Assertion  string `json:"assertion"`
	Group      string `json:"group"`
	Verdict    string `json:"verdict"`
	StartEvent int64  `json:"start_event"`
	EndEvent   int64  `json:"end_event"`
}

func (v verdict) String() string {
	return fmt.Sprintf("%s %s %d-%d", v.Assertion, v.Verdict, v.StartEvent, v.EndEvent)
}

func compareVerdicts(a, b verdict) int {
	return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Assertion, b.Assertion),
		cmp.Compare(a.StartEvent, b.StartEvent), cmp.Compare(a.EndEvent, b.EndEvent), strings.Compare(a.Verdict, b.Verdict))
}

// reported is a verdict log record the collector sent.
type reported struct {
	verdict
	traceID  string
	spanID   string
	onSpan   string    // the span it was written on
	at       time.Time // when the sink received it
	shutdown bool      // it came only once the collector was shutting down
	body     string    // the explanation
}

// saveReported writes the collector's verdicts as JSON lines, in the order
// they came.
func saveReported(path string, rs []reported) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for _, r := range rs {
		err = errors.Join(err, enc.Encode(struct {
			verdict
			TraceID     string    `json:"trace_id"`
			SpanID      string    `json:"span_id"`
			SpanName    string    `json:"span_name"`
			Received    time.Time `json:"received"`
			Shutdown    bool      `json:"at_shutdown"`
			Explanation string    `json:"explanation"`
		}{r.verdict, r.traceID, r.spanID, r.onSpan, r.at, r.shutdown, r.body}))
	}
	return errors.Join(err, f.Close())
}

// verdictSpan is the name of the span temporalcheck writes a verdict
// decided after the group's spans left on.
const verdictSpan = "agentguard verdict"

// fromRecords are temporalcheck's verdicts among the records; those
// received after stopping are marked shutdown.
func fromRecords(recs []harness.Received, stopping time.Time) []reported {
	var out []reported
	for _, r := range recs {
		a := r.Record.Attributes().AsRaw()
		if a[verdictattr.Check] != verdictattr.CheckTemporal {
			continue
		}
		s := func(k string) string { v, _ := a[k].(string); return v }
		n := func(k string) int64 { v, _ := a[k].(int64); return v }
		out = append(out, reported{
			verdict: verdict{Assertion: s(verdictattr.EvaluationName), Group: s(verdictattr.Group), Verdict: s(verdictattr.Verdict),
				StartEvent: n(verdictattr.StartEvent), EndEvent: n(verdictattr.EndEvent)},
			traceID: r.Record.TraceID().String(), spanID: r.Record.SpanID().String(), onSpan: s(verdictattr.SpanName), at: r.At,
			shutdown: !r.At.Before(stopping), body: r.Record.Body().AsString(),
		})
	}
	return out
}

// fromCheck reads the verdicts of `agentguard check --format json`.
func fromCheck(path string) ([]verdict, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep struct {
		Findings *[]verdict `json:"findings"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if rep.Findings == nil {
		return nil, fmt.Errorf("%s: no findings list: not the output of agentguard check --format json", path)
	}
	return *rep.Findings, nil
}

// outcome is one conversation judged by both.
type outcome struct {
	conv               conversation
	collector, check   []verdict // sorted
	agree              bool
	falseAlarm         bool     // a correct conversation with a verdict from either
	missedBy           []string // "collector", "check": a faulty one without its expected assertion
	collectorShutdowns int      // the collector's verdicts that came only at its shutdown
}

// judgement is the whole run judged.
type judgement struct {
	outcomes []outcome
	// strays are verdicts of groups that are no conversation played.
	strays []string
}

func (j judgement) count() (disagreements, falseAlarms, misses, shutdowns int) {
	for _, o := range j.outcomes {
		if !o.agree {
			disagreements++
		}
		if o.falseAlarm {
			falseAlarms++
		}
		if len(o.missedBy) > 0 {
			misses++
		}
		shutdowns += o.collectorShutdowns
	}
	return
}

func (j judgement) ok() bool {
	d, f, m, s := j.count()
	return d+f+m+s+len(j.strays) == 0
}

// judge compares, conversation by conversation, the collector's verdicts
// with check's.
func judge(convs []conversation, col []reported, chk []verdict) judgement {
	played := map[string]bool{}
	for _, c := range convs {
		played[c.ID] = true
	}
	byCol, shutdowns := map[string][]verdict{}, map[string]int{}
	var j judgement
	for _, r := range col {
		if !played[r.Group] {
			j.strays = append(j.strays, fmt.Sprintf("collector: group %q: %s", r.Group, r.verdict))
			continue
		}
		byCol[r.Group] = append(byCol[r.Group], r.verdict)
		if r.shutdown {
			shutdowns[r.Group]++
		}
	}
	byChk := map[string][]verdict{}
	for _, v := range chk {
		if !played[v.Group] {
			j.strays = append(j.strays, fmt.Sprintf("check: group %q: %s", v.Group, v))
			continue
		}
		byChk[v.Group] = append(byChk[v.Group], v)
	}
	for _, c := range convs {
		o := outcome{conv: c, collector: byCol[c.ID], check: byChk[c.ID], collectorShutdowns: shutdowns[c.ID]}
		slices.SortFunc(o.collector, compareVerdicts)
		slices.SortFunc(o.check, compareVerdicts)
		o.agree = slices.Equal(o.collector, o.check)
		o.falseAlarm = !c.faulty() && len(o.collector)+len(o.check) > 0
		if c.faulty() {
			for who, vs := range map[string][]verdict{"collector": o.collector, "check": o.check} {
				if !slices.ContainsFunc(vs, func(v verdict) bool { return v.Assertion == c.Expect }) {
					o.missedBy = append(o.missedBy, who)
				}
			}
			slices.Sort(o.missedBy)
		}
		j.outcomes = append(j.outcomes, o)
	}
	return j
}

// delays are the times from the collector's answer to an export to a
// verdict record's arrival, for verdicts on event spans and on verdict spans
// apart. A verdict on an event is measured from its trace's last export (the
// trace is judged root_wait after its root); one on a verdict span from the
// last export of its conversation's spans before it came (the group ends
// group_timeout after its last trace; the verdict span sits in the trace of
// the group's last event, which may be an earlier one). Verdicts that came
// at shutdown are left out: they measure the harness.
func delays(col []reported, lastByTrace map[string]time.Time, byConv map[string][]time.Time) (onEvents, onVerdictSpans []time.Duration) {
	for _, r := range col {
		if r.shutdown {
			continue
		}
		if r.onSpan != verdictSpan {
			if last, ok := lastByTrace[r.traceID]; ok {
				onEvents = append(onEvents, r.at.Sub(last))
			}
			continue
		}
		ts := byConv[r.Group]
		if i, _ := slices.BinarySearchFunc(ts, r.at, time.Time.Compare); i > 0 {
			onVerdictSpans = append(onVerdictSpans, r.at.Sub(ts[i-1]))
		}
	}
	return onEvents, onVerdictSpans
}

// percentile is the nearest-rank p-th percentile (0 < p <= 100) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(p * float64(len(s)) / 100))
	return s[min(max(rank, 1), len(s))-1]
}
