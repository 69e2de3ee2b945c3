// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"sync"

	"go.uber.org/zap"
)

// Warnings logs a kind of decision not taken the first time it happens; the
// self-metrics count every occurrence. It is safe for concurrent use, and a
// kind already logged costs one lock-free map read.
type Warnings struct {
	logger *zap.Logger
	warned sync.Map // kind -> struct{}
}

// NewWarnings logs to logger.
func NewWarnings(logger *zap.Logger) *Warnings { return &Warnings{logger: logger} }

// Once logs msg at WARN if no warning of this kind was logged before.
func (w *Warnings) Once(kind, msg string, fields ...zap.Field) {
	if _, seen := w.warned.Load(kind); seen {
		return
	}
	if _, seen := w.warned.LoadOrStore(kind, struct{}{}); seen {
		return
	}
	w.logger.Warn(msg+" (logged once; see the self-metrics)", fields...)
}
