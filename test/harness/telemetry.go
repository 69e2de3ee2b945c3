// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
)

// TelemetryConfig is a configuration that serves the collector's own metrics
// on addr (host:port), named as by default (no scope info, unit or type
// suffix): merged after the others, it replaces the default reader on :8888,
// which something else may hold (the collector would not start).
func TelemetryConfig(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf(`service:
  telemetry:
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: %q
                port: %s
                without_scope_info: true
                without_units: true
                without_type_suffix: true
`, host, port)
}

// WriteTelemetryConfig writes TelemetryConfig(addr) to a temporary file and
// returns its path.
func WriteTelemetryConfig(addr string) (string, error) {
	f, err := os.CreateTemp("", "otelcol-telemetry-*.yaml")
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(TelemetryConfig(addr))
	return f.Name(), errors.Join(err, f.Close())
}

// debugSpans matches the debug exporter's line for each batch it was given
// at basic verbosity: what a traces pipeline passed on. (Its log must not be
// sampled: --set service::telemetry::logs::sampling::enabled=false.)
var debugSpans = regexp.MustCompile(`\tTraces\t.*"spans": (\d+)`)

// SpansPassedOn adds up the spans the collector's debug exporter logged.
func SpansPassedOn(logPath string) (int, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, batches := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		if m := debugSpans.FindStringSubmatch(sc.Text()); m != nil {
			k, _ := strconv.Atoi(m[1])
			n += k
			batches++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if batches == 0 {
		return 0, fmt.Errorf("no debug exporter line in the collector's log %s", logPath)
	}
	return n, nil
}
