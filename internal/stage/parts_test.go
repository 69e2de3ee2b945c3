// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentguard/agentguard/internal/core/events"
)

func TestInterval(t *testing.T) {
	for _, c := range []struct{ wait, root, want time.Duration }{
		{10 * time.Second, time.Second, 250 * time.Millisecond},
		{10 * time.Second, 0, time.Second},
		{time.Millisecond, 0, 10 * time.Millisecond},
	} {
		if got := (Bounds{Wait: c.wait, RootWait: c.root}).interval(); got != c.want {
			t.Errorf("interval(%v, %v) = %v, want %v", c.wait, c.root, got, c.want)
		}
	}
}

func TestClockTicksUntilStopped(t *testing.T) {
	var c ticker
	c.halt() // never started: returns at once
	var ticks atomic.Int64
	c.start(time.Millisecond, func() { ticks.Add(1) })
	for deadline := time.Now().Add(5 * time.Second); ticks.Load() < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the clock did not tick")
		}
	}
	c.halt()
	n := ticks.Load()
	time.Sleep(10 * time.Millisecond)
	if ticks.Load() != n {
		t.Error("the clock ticked after halt")
	}
}

func TestWarningsOncePerKind(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	w := NewWarnings(zap.New(core))
	w.Once("late", "late spans")
	w.Once("late", "late spans again")
	w.Once("early", "early release")
	if logs.Len() != 2 {
		t.Errorf("%d warnings logged, want one per kind: %v", logs.Len(), logs.All())
	}
}

func TestRecentOrdersByLastActivity(t *testing.T) {
	r := NewRecent[*int]()
	t0 := time.Unix(0, 0)
	made := 0
	create := func() *int { made++; v := made; return &v }
	r.Touch("a", t0, create)
	r.Touch("b", t0.Add(time.Second), create)
	r.Touch("c", t0.Add(2*time.Second), create)
	if v := r.Touch("a", t0.Add(3*time.Second), create); *v != 1 || made != 3 {
		t.Fatalf("touching a again made a new value: %d (%d made)", *v, made)
	}
	if k := r.Oldest(); k != "b" {
		t.Errorf("oldest %q, want b", k)
	}
	if got := r.Idle(t0.Add(3*time.Second), 1500*time.Millisecond); !slices.Equal(got, []string{"b"}) {
		t.Errorf("idle %v, want [b]", got)
	}
	if v, ok := r.Remove("c"); !ok || *v != 3 || r.Len() != 2 {
		t.Errorf("remove c: %v %v, %d left", v, ok, r.Len())
	}
	if got := r.Keys(); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("keys %v", got)
	}
}

// Ending the least recently active of many groups is not a scan of them all.
func BenchmarkRecentEvictAtBound(b *testing.B) {
	const bound = 100_000
	r := NewRecent[struct{}]()
	now := time.Unix(0, 0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		now = now.Add(time.Microsecond)
		r.Touch(strconv.Itoa(i), now, func() struct{} { return struct{}{} })
		for r.Len() > bound {
			k := r.Oldest()
			r.Remove(k)
		}
	}
}

// Judging on arrival with late spans passed unjudged would lose every
// batch of a trace after its first: refused.
func TestOnArrivalNeedsLateContinue(t *testing.T) {
	_, err := New(Config{Bounds: Bounds{Wait: time.Second, GroupTimeout: time.Second, MaxTraces: 10, MaxSpansPerTrace: 10},
		GroupBy: "trace_id", OnArrival: true, Late: LateResume}, componenttest.NewNopTelemetrySettings(), consumertest.NewNop(), nopMetrics(),
		func() (*events.Source, error) { return nil, nil }, newRecorder())
	if err == nil || !strings.Contains(err.Error(), "LateContinue") {
		t.Errorf("New: %v", err)
	}
}
