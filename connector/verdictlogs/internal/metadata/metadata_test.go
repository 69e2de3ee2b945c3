// SPDX-License-Identifier: Apache-2.0

package metadata

import (
	"flag"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"

	"github.com/agentguard/agentguard/internal/selfmetric/selfmetrictest"
)

var update = flag.Bool("update", false, "write ../../documentation.md from ../../metadata.yaml")

const regenerate = "`go test ./connector/verdictlogs/internal/metadata -run TestDocumentation -update`"

// The Go declarations and metadata.yaml agree, both ways: type, stability,
// every metric's name, description, unit, kind, value type, monotonicity,
// attributes, buckets and enabled, every attribute and its values; and the
// README explains each warning (the connector holds nothing: it has none).
func TestMetadata(t *testing.T) {
	md := selfmetrictest.Check(t, "../../metadata.yaml", selfmetrictest.Component{
		Type: Type, Class: "connector",
		Stability:       map[string]component.StabilityLevel{"traces_to_logs": TracesToLogsStability, "traces_to_metrics": TracesToMetricsStability},
		Instruments:     new(TelemetryBuilder).instruments(),
		AttributeValues: attributeValues(),
	})
	selfmetrictest.CheckWarnings(t, md, "../../README.md")
}

func TestDocumentation(t *testing.T) {
	md, err := selfmetrictest.Load("../../metadata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	selfmetrictest.CheckDocumentation(t, md, "../../documentation.md", regenerate, *update)
}

// The meter's scope is the component's import path.
func TestScopeName(t *testing.T) {
	if want := strings.TrimSuffix(reflect.TypeFor[TelemetryBuilder]().PkgPath(), "/internal/metadata"); ScopeName != want {
		t.Errorf("ScopeName %q, want %q", ScopeName, want)
	}
}
