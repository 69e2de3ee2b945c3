// SPDX-License-Identifier: Apache-2.0

package metadata

import (
	"testing"

	"go.opentelemetry.io/collector/component"

	"github.com/agentguard/agentguard/internal/selfmetric/selfmetrictest"
)

// The Go declarations and metadata.yaml agree: type, class and stability
// (the extension records no metrics of its own).
func TestMetadata(t *testing.T) {
	selfmetrictest.Check(t, "../../metadata.yaml", selfmetrictest.Component{
		Type: Type, Class: "extension",
		Stability: map[string]component.StabilityLevel{"extension": ExtensionStability},
	})
}
