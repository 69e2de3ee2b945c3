// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/processor"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	nooptrace "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// processorConfig reads one processor's block from a collector configuration
// file, the very file the collector runs: the one named, or else the only
// processor of the factory's type. It is unmarshalled and validated as the
// collector would.
func processorConfig(path, name string, f processor.Factory) (component.ID, component.Config, error) {
	id, cfg, err := unmarshalProcessor(path, name, f)
	if err != nil {
		return id, nil, err
	}
	if err := confmap.Validate(cfg); err != nil {
		return component.ID{}, nil, fmt.Errorf("%s: processors::%s: %w", path, id, err)
	}
	return id, cfg, nil
}

// unmarshalProcessor reads one processor's block, unmarshalled as the
// collector does, not yet validated.
func unmarshalProcessor(path, name string, f processor.Factory) (component.ID, component.Config, error) {
	conf, err := resolve(path)
	if err != nil {
		return component.ID{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	procs, err := conf.Sub("processors")
	if err != nil {
		return component.ID{}, nil, fmt.Errorf("%s: processors: %w", path, err)
	}
	id, err := pickProcessor(procs, name, f.Type())
	if err != nil {
		return component.ID{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	sub, err := procs.Sub(id.String())
	if err != nil {
		return component.ID{}, nil, err
	}
	cfg := f.CreateDefaultConfig()
	if err := sub.Unmarshal(cfg); err != nil {
		return component.ID{}, nil, fmt.Errorf("%s: processors::%s: %w", path, id, err)
	}
	return id, cfg, nil
}

// resolve reads the file as the collector does, ${env:NAME} and
// ${env:NAME:-default} expanded.
func resolve(path string) (*confmap.Conf, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	r, err := confmap.NewResolver(confmap.ResolverSettings{
		URIs:              []string{"file:" + abs},
		ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
		DefaultScheme:     "env",
	})
	if err != nil {
		return nil, err
	}
	defer r.Shutdown(context.Background())
	return r.Resolve(context.Background())
}

func pickProcessor(procs *confmap.Conf, name string, typ component.Type) (component.ID, error) {
	var found []string
	for key := range procs.ToStringMap() {
		var id component.ID
		if err := id.UnmarshalText([]byte(key)); err == nil && id.Type() == typ {
			found = append(found, key)
		}
	}
	slices.Sort(found)
	switch {
	case name != "" && slices.Contains(found, name):
		var id component.ID
		return id, id.UnmarshalText([]byte(name))
	case name != "":
		return component.ID{}, fmt.Errorf("no processor %q (%s processors: %s)", name, typ, orNone(found))
	case len(found) == 1:
		var id component.ID
		return id, id.UnmarshalText([]byte(found[0]))
	case len(found) == 0:
		return component.ID{}, fmt.Errorf("no %s processor in the configuration", typ)
	}
	return component.ID{}, fmt.Errorf("several %s processors (%s): choose one with --processor", typ, strings.Join(found, ", "))
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// offlineSettings are the settings of a processor run by a command: its
// warnings (what it logs once) go to stderr; its metrics go nowhere.
func offlineSettings(id component.ID, stderr io.Writer) processor.Settings {
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), zapcore.AddSync(stderr), zap.WarnLevel)
	return processor.Settings{
		ID: id,
		TelemetrySettings: component.TelemetrySettings{
			Logger:         zap.New(core),
			TracerProvider: nooptrace.NewTracerProvider(),
			MeterProvider:  noopmetric.NewMeterProvider(),
			Resource:       pcommon.NewResource(),
		},
		BuildInfo: component.NewDefaultBuildInfo(),
	}
}
