// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// receiver answers each request with the next status of statuses, then 200.
func receiver(t *testing.T, statuses ...int) (addr string, requests *atomic.Int64) {
	t.Helper()
	requests = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if i := int(requests.Add(1)) - 1; i < len(statuses) {
			w.WriteHeader(statuses[i])
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), requests
}

func TestPostTracesRetryingRetriesWhatIsRetryable(t *testing.T) {
	addr, requests := receiver(t, http.StatusServiceUnavailable, http.StatusTooManyRequests)
	retries, err := PostTracesRetrying(addr, []byte("spans"))
	if err != nil || retries != 2 || requests.Load() != 3 {
		t.Errorf("PostTracesRetrying = %d, %v after %d requests; want 2 retries, 3 requests", retries, err, requests.Load())
	}
	addr, requests = receiver(t, http.StatusBadRequest)
	if _, err := PostTracesRetrying(addr, []byte("spans")); err == nil || requests.Load() != 1 {
		t.Errorf("a 400 gave %v after %d requests; want an error at once", err, requests.Load())
	}
}

func TestSendAllTracesSendsEach(t *testing.T) {
	addr, requests := receiver(t, http.StatusBadGateway)
	retries, err := SendAllTraces(addr, make([][]byte, 10), 3)
	if err != nil || retries != 1 || requests.Load() != 11 {
		t.Errorf("SendAllTraces = %d, %v after %d requests; want 1 retry, 11 requests", retries, err, requests.Load())
	}
}
