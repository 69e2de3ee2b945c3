// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentguard/agentguard/test/harness"
)

// passThrough receives and exports, and does nothing else.
const passThrough = `
receivers:
  otlp:
    protocols:
      http:
        endpoint: ${env:AGENTGUARD_OTLP_HTTP}
exporters:
  otlp_http/sink:
    traces_endpoint: ${env:AGENTGUARD_SINK}/v1/traces
    compression: none
service:
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [otlp_http/sink]
`

// withBatch, merged over passThrough, puts the batch processor with its
// defaults in the pipeline: the fair baseline for agentguard, whose holding
// stage batches what it exports as well.
const withBatch = `
processors:
  batch:
service:
  pipelines:
    traces:
      processors: [batch]
`

// toSink, merged over an example's configuration, exports the spans of its
// traces pipeline to the sink, and its verdicts to the sink's /v1/logs only
// (AGENTGUARD_VERDICTS_ENDPOINT), instead of printing them: printing would
// cost the collector more than what is measured.
func toSink(pipeline string) string {
	return fmt.Sprintf(`
exporters:
  otlp_http/sink:
    traces_endpoint: ${env:AGENTGUARD_SINK}/v1/traces
    compression: none
service:
  pipelines:
    %s:
      exporters: [verdictlogs, otlp_http/sink]
    logs/verdicts:
      exporters: [otlp_http/verdicts]
`, pipeline)
}

// setup is a collector configuration.
type setup struct {
	name    string
	configs []string // files, or YAML (it holds a newline) to write to one; merged in order
	env     []string // besides the endpoints every setup is given
}

func plainSetup() setup { return setup{name: "pass-through", configs: []string{passThrough}} }

func batchSetup() setup {
	return setup{name: "pass-through with batch", configs: []string{passThrough, withBatch}}
}

func householdSetup() setup {
	return setup{name: "household", configs: []string{"examples/household/collector.yaml", toSink("traces/household")}}
}

func weatherSetup(config string) setup {
	return setup{name: "weather", configs: []string{config, toSink("traces")}}
}

// openGroupsSetup is the weather configuration with conversations that
// stay open through row 4's run and well after it.
func openGroupsSetup() setup {
	s := weatherSetup(defaultWeather)
	s.env = []string{"AGENTGUARD_GROUP_TIMEOUT=1h"}
	return s
}

// start runs s in the built collector, its OTLP/HTTP receiver on a free
// loopback port (returned) and its exports to sk, its log in o.dir/log.
func start(o options, s setup, sk *sink, log string) (*harness.Collector, string, error) {
	addrs, err := harness.FreeAddrs(2)
	if err != nil {
		return nil, "", err
	}
	paths, err := writeConfigs(o.dir, s.configs)
	if err != nil {
		return nil, "", err
	}
	env := append([]string{
		"AGENTGUARD_OTLP_HTTP=" + addrs[0],
		"AGENTGUARD_RISK_ENDPOINT=" + addrs[1], // guard.yaml's decisions endpoint
		"AGENTGUARD_SINK=http://" + sk.addr,
		"AGENTGUARD_VERDICTS_ENDPOINT=http://" + sk.addr + "/v1/logs",
		"AGENTGUARD_HOUSEHOLD_MODEL=examples/household/model.json",
	}, s.env...)
	col, err := harness.StartCollector(harness.CollectorOptions{Bin: o.bin, Configs: paths, Env: env,
		// Its own metrics are not what is measured, and the default
		// reader's port may be taken.
		Sets: []string{"service::telemetry::metrics::level=none"},
		Log:  filepath.Join(o.dir, log)})
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", s.name, err)
	}
	return col, addrs[0], nil
}

// writeConfigs returns configs as paths, each YAML text written to a file
// of its own in dir.
func writeConfigs(dir string, configs []string) ([]string, error) {
	var paths []string
	for _, c := range configs {
		if !strings.Contains(c, "\n") {
			paths = append(paths, c)
			continue
		}
		f, err := os.CreateTemp(dir, "config-*.yaml")
		if err != nil {
			return nil, err
		}
		_, err = f.WriteString(c)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		paths = append(paths, f.Name())
	}
	return paths, nil
}
