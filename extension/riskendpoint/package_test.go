// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"testing"

	"go.uber.org/goleak"
)

// No test may leave a goroutine behind: the server must stop at Shutdown.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
