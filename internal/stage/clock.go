// SPDX-License-Identifier: Apache-2.0

package stage

import "time"

// ticker calls a function at an interval, from start until stop.
type ticker struct {
	stop, done chan struct{}
}

// start calls tick every interval in a goroutine of its own.
func (c *ticker) start(every time.Duration, tick func()) {
	c.stop, c.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(c.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				tick()
			}
		}
	}()
}

// halt ends the ticker and waits for a tick under way; a ticker never
// started halts at once.
func (c *ticker) halt() {
	if c.stop == nil {
		return
	}
	close(c.stop)
	<-c.done
	c.stop = nil
}
