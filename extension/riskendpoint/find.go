// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"fmt"

	"go.opentelemetry.io/collector/component"
)

// Find is the extension a processor's risk_endpoint setting names among
// host's, and that extension as T, the part of it the processor uses
// (Board, Registry); the error says what to fix in the setting.
func Find[T any](host component.Host, id component.ID) (component.Component, T, error) {
	var as T
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return nil, as, fmt.Errorf("risk_endpoint: no extension %q is running: configure it under extensions and list it in service::extensions", id)
	}
	if as, ok = ext.(T); !ok {
		return nil, as, fmt.Errorf("risk_endpoint: extension %q is not a riskendpoint (it is a %s)", id, id.Type())
	}
	return ext, as, nil
}
