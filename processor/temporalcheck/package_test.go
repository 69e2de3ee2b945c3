// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"testing"

	"go.uber.org/goleak"
)

// No test may leave a goroutine behind: the release clock and anything else
// a processor starts must stop at Shutdown.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
