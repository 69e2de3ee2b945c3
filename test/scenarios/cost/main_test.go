// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/sequence"
)

func TestParseBench(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkThroughputParallel/passthrough         	 2000000	       600.0 ns/op	        50.00 ns/span	  20000000 spans/s	     900 B/op	      10 allocs/op
BenchmarkThroughputParallel/passthrough-2       	 3000000	       400.0 ns/op	        33.00 ns/span	  30000000 spans/s	     900 B/op	      10 allocs/op
BenchmarkThroughputParallel/temporalcheck       	  100000	     34440 ns/op	      2870 ns/span	    348432 spans/s	   41000 B/op	     500 allocs/op
BenchmarkThroughputParallel/temporalcheck-2     	  200000	     19680 ns/op	      1640 ns/span	    609756 spans/s	   41000 B/op	     500 allocs/op
PASS
`)
	got, err := parseBench(out)
	if err != nil {
		t.Fatal(err)
	}
	if tc := got["temporalcheck"]; tc != [2]float64{34440, 19680} {
		t.Errorf("temporalcheck ns/op at 1 and 2 cores = %v, want [34440 19680]", tc)
	}
	if _, err := parseBench(out[:len(out)/2]); err == nil {
		t.Error("an output without temporalcheck's lines parsed")
	}
}

func TestPercentileAndMedian(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if p50, p99 := percentile(d, 0.5), percentile(d, 0.99); p50 != 50*time.Millisecond || p99 != 99*time.Millisecond {
		t.Errorf("p50, p99 of 1..100 ms = %v, %v; want 50ms, 99ms", p50, p99)
	}
	if m := median([]float64{3, 1, 2, 10}); m != 2.5 {
		t.Errorf("median = %v, want 2.5", m)
	}
}

func TestParseRows(t *testing.T) {
	if rows, err := parseRows("1, 4,6"); err != nil || len(rows) != 3 || !rows[4] {
		t.Errorf("parseRows = %v, %v", rows, err)
	}
	if _, err := parseRows("8"); err == nil {
		t.Error("row 7 accepted")
	}
}

// Each copy of a recorded conversation is a conversation of its own: new
// trace IDs, and every conversation key the recording carried rewritten.
func TestWeatherLoadMakesNewConversations(t *testing.T) {
	t.Chdir("../../..")
	l, err := weatherLoad(3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i, raw := range l.requests {
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range l.traceIDs[i] {
			seen[id.String()]++
		}
		keys := 0
		for _, sp := range td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().All() {
			for _, key := range sequence.ConversationKeys() {
				if v, ok := sp.Attributes().Get(key); ok {
					keys++
					if want := "conversation-" + strconv.Itoa(i); v.Str() != want {
						t.Errorf("request %d: %s = %q, want %q", i, key, v.Str(), want)
					}
				}
			}
		}
		if keys == 0 {
			t.Errorf("request %d carries no conversation key", i)
		}
	}
	if len(seen) != 6 {
		t.Errorf("%d distinct trace IDs in 3 two-turn conversations, want 6", len(seen))
	}
}

func TestGroupsLoad(t *testing.T) {
	l, err := groupsLoad(250, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.requests) != 3 || l.spans != 250 {
		t.Errorf("250 groups, 100 a request: %d requests, %d spans", len(l.requests), l.spans)
	}
}
