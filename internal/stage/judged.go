// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// judgedSpans remembers the IDs of the last spans a worker judged, so that
// a question can wait until the span an agent exported last is judged
// (Ask's after). It is a ring and a set of at most its size.
type judgedSpans struct {
	ring []pcommon.SpanID
	next int
	set  map[pcommon.SpanID]struct{}
}

func newJudgedSpans(size int) *judgedSpans {
	return &judgedSpans{ring: make([]pcommon.SpanID, 0, size), set: make(map[pcommon.SpanID]struct{}, size)}
}

func (j *judgedSpans) addAll(td ptrace.Traces) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				j.add(sp.SpanID())
			}
		}
	}
}

func (j *judgedSpans) add(id pcommon.SpanID) {
	if _, ok := j.set[id]; ok {
		return
	}
	if len(j.ring) < cap(j.ring) {
		j.ring = append(j.ring, id)
	} else {
		delete(j.set, j.ring[j.next])
		j.ring[j.next] = id
		j.next = (j.next + 1) % len(j.ring)
	}
	j.set[id] = struct{}{}
}

func (j *judgedSpans) has(id pcommon.SpanID) bool {
	_, ok := j.set[id]
	return ok
}
