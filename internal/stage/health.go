// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"errors"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
)

// health reports the stage's component status to the collector, so that a
// health probe (health_check with component status) can say the checker
// is behind: RecoverableError while incoming spans had to be refused (the
// evaluators or the next consumer did not keep up, and the caller's
// deadline came first), OK again at the next batch taken in. Only the
// changes are reported.
type health struct {
	mu       sync.Mutex
	host     component.Host // nil before Start, or offline: nothing to report to
	refusing bool
}

// errRefusing is the status's error while spans are refused.
var errRefusing = errors.New("refusing spans: the evaluators, or the next consumer, are behind (backpressure)")

func (h *health) start(host component.Host) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.host = host
}

// admitted records whether a batch was taken in, and reports a change.
func (h *health) admitted(ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.host == nil || h.refusing == !ok {
		return
	}
	h.refusing = !ok
	ev := componentstatus.NewEvent(componentstatus.StatusOK)
	if !ok {
		ev = componentstatus.NewRecoverableErrorEvent(errRefusing)
	}
	componentstatus.ReportStatus(h.host, ev)
}
