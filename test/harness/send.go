// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Backoff bounds PostTracesRetrying: the first wait after a refusal, and
// the longest before it gives up.
const (
	firstBackoff = 5 * time.Millisecond
	lastBackoff  = time.Minute
)

// PostTracesRetrying sends one OTLP/HTTP protobuf export request to the
// receiver at addr and, while the collector refuses it as retryable (429,
// 502, 503, 504), sends it again after a backoff doubling from 5 ms, as an
// OTLP exporter does: a saturated collector's pressure slows the sender
// down, and a span is lost only if the collector acknowledged it. It
// returns how many times it sent the request again.
func PostTracesRetrying(addr string, body []byte) (int, error) {
	wait := firstBackoff
	for retries := 0; ; retries++ {
		resp, err := http.Post("http://"+addr+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			return retries, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			return retries, nil
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			if wait > lastBackoff {
				return retries, fmt.Errorf("still refused after %d tries: %s", retries+1, resp.Status)
			}
			time.Sleep(wait)
			wait *= 2
		default:
			return retries, fmt.Errorf("POST /v1/traces: %s", resp.Status)
		}
	}
}

// SendAllTraces posts every request with PostTracesRetrying, senders at a
// time (as many agents' exporters would), and returns the retries in all;
// the first error stops the sender that met it.
func SendAllTraces(addr string, requests [][]byte, senders int) (int, error) {
	var wg sync.WaitGroup
	var next, retries atomic.Int64
	errs := make([]error, senders)
	for s := range senders {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(requests); i = int(next.Add(1)) - 1 {
				n, err := PostTracesRetrying(addr, requests[i])
				retries.Add(int64(n))
				if err != nil {
					errs[s] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return int(retries.Load()), errors.Join(errs...)
}
