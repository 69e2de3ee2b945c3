// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"context"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentguard/agentguard/internal/checkpoint/checkpointtest"
	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
)

// BenchmarkThroughput: the paper's configuration over the ADK failing run,
// beside a processor that only passes batches on, in the same run. One op is
// one trace; ns/span and spans/s are what to compare.
func BenchmarkThroughput(b *testing.B) {
	tmpl := fixtures.Traces(b, "adk-weather/adk-bad-43-0.json")
	b.Run("passthrough", func(b *testing.B) { fixtures.PassThrough(b, metadata.Type, tmpl) })
	b.Run("temporalcheck", func(b *testing.B) {
		cfg, err := loadConfig(b, "paper")
		if err != nil {
			b.Fatal(err)
		}
		throughputOnFakeClock(b, tmpl, cfg, nil)
	})
	b.Run("temporalcheck+file_storage", func(b *testing.B) {
		cfg, err := loadConfig(b, "paper")
		if err != nil {
			b.Fatal(err)
		}
		id := component.MustNewID("file_storage")
		cfg.Storage, cfg.CheckpointInterval = &id, 24*time.Hour // the journal's cost, not the checkpoints'
		throughputOnFakeClock(b, tmpl, cfg, fileStorage(b, id))
	})
}

// fileStorage runs a file_storage extension in a temporary directory, as
// the host of a processor's storage.
func fileStorage(b *testing.B, id component.ID) component.Host {
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = b.TempDir()
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ext.Shutdown(context.Background()) })
	return checkpointtest.HostWith(map[component.ID]component.Component{id: ext})
}

// throughputOnFakeClock runs fixtures.Throughput through a processor of cfg
// on the benchmark's goroutine, its clock a minute on at every release; a
// host, if given, starts it (its storage).
func throughputOnFakeClock(b *testing.B, tmpl ptrace.Traces, cfg *Config, host component.Host) {
	pt, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, fixtures.NopTraces{})
	if err != nil {
		b.Fatal(err)
	}
	p := pt.(*temporalProcessor)
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	p.UseClock(clock.now)
	if host != nil {
		if err := p.Start(context.Background(), host); err != nil {
			b.Fatal(err)
		}
	}
	fixtures.Throughput(b, tmpl, p.ConsumeTraces, func() {
		clock.t = clock.t.Add(time.Minute)
		p.Tick(clock.t)
	})
	if err := p.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkThroughputParallel: as BenchmarkThroughput, with concurrent senders
// (fixtures.ThroughputParallel) and the processor on its own clock (wait 5ms), as in a collector:
// run with -cpu 1,2 to see it scale, beside the pass-through.
func BenchmarkThroughputParallel(b *testing.B) {
	tmpl := fixtures.Traces(b, "adk-weather/adk-bad-43-0.json")
	b.Run("passthrough", func(b *testing.B) { fixtures.PassThroughParallel(b, metadata.Type, tmpl) })
	b.Run("temporalcheck", func(b *testing.B) {
		cfg, err := loadConfig(b, "paper")
		if err != nil {
			b.Fatal(err)
		}
		cfg.Wait, cfg.RootWait = 5*time.Millisecond, 0
		p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, fixtures.NopTraces{})
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
			b.Fatal(err)
		}
		fixtures.ThroughputParallel(b, tmpl, p.ConsumeTraces, func() {
			if err := p.Shutdown(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
	})
}
