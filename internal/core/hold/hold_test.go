package hold

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestInterval(t *testing.T) {
	for _, c := range []struct{ wait, root, want time.Duration }{
		{10 * time.Second, time.Second, 250 * time.Millisecond},
		{10 * time.Second, 0, time.Second},
		{time.Millisecond, 0, 10 * time.Millisecond},
	} {
		if got := (Bounds{Wait: c.wait, RootWait: c.root}).Interval(); got != c.want {
			t.Errorf("Interval(%v, %v) = %v, want %v", c.wait, c.root, got, c.want)
		}
	}
}

func TestClockTicksUntilStopped(t *testing.T) {
	var c Clock
	c.Stop() // never started: returns at once
	var ticks atomic.Int64
	c.Start(time.Millisecond, func() { ticks.Add(1) })
	for deadline := time.Now().Add(5 * time.Second); ticks.Load() < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the clock did not tick")
		}
	}
	c.Stop()
	n := ticks.Load()
	time.Sleep(10 * time.Millisecond)
	if ticks.Load() != n {
		t.Error("the clock ticked after Stop")
	}
}

// A failing batch does not keep the next one back; the first error is returned.
func TestForwardPassesEveryBatch(t *testing.T) {
	sink := new(consumertest.TracesSink)
	calls := 0
	next, _ := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		calls++
		if calls == 1 {
			return errors.New("first fails")
		}
		return sink.ConsumeTraces(ctx, td)
	})
	refused, err := Forward(context.Background(), next, []ptrace.Traces{ptrace.NewTraces(), ptrace.NewTraces(), ptrace.NewTraces()})
	if refused != 1 || err == nil || err.Error() != "first fails" || len(sink.AllTraces()) != 2 {
		t.Errorf("refused %d, err %v, %d batches passed", refused, err, len(sink.AllTraces()))
	}
}

func TestGaugeFollowsTheSize(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	counter, _ := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("t").Int64UpDownCounter("held")
	g := NewGauge(counter)
	for _, n := range []int{3, 7, 2} {
		g.Record(context.Background(), n)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if v := rm.ScopeMetrics[0].Metrics[0].Data.(metricdata.Sum[int64]).DataPoints[0].Value; v != 2 {
		t.Errorf("gauge %d, want 2", v)
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
