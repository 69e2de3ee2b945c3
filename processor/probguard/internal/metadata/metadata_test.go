// SPDX-License-Identifier: Apache-2.0

package metadata

import (
	"flag"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/selfmetric/selfmetrictest"
)

var update = flag.Bool("update", false, "write ../../documentation.md from ../../metadata.yaml")

const regenerate = "`go test ./processor/probguard/internal/metadata -run TestDocumentation -update`"

// The Go declarations and metadata.yaml agree, both ways: type, stability,
// every metric's name, description, unit, kind, value type, monotonicity,
// attributes, buckets and enabled, every attribute and its values; and the
// README explains each warning.
func TestMetadata(t *testing.T) {
	md := selfmetrictest.Check(t, "../../metadata.yaml", selfmetrictest.Component{
		Type: Type, Class: "processor",
		Stability:       map[string]component.StabilityLevel{"traces": TracesStability},
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

// The property values are the engine's property kinds.
func TestPropertyValuesAreTheEngines(t *testing.T) {
	for _, k := range []dtmc.Kind{dtmc.AlwaysSafe, dtmc.Bounded, dtmc.Response} {
		if !slices.Contains(attributeValues()[AttrProperty], string(k)) {
			t.Errorf("property %q is not among %q", k, attributeValues()[AttrProperty])
		}
	}
}
