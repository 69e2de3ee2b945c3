// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"testing"

	"go.uber.org/goleak"
)

// No test may leave a goroutine behind: the server must stop at Shutdown.
// One of net/http's own is let go: after refusing a body larger than the
// cap (413) it keeps the connection half-open for half a second so that the
// client reads the refusal, whatever Close says.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("net/http.(*conn).closeWriteAndWait"))
}
