// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"time"
)

// alert is one alert of an Alertmanager webhook notification.
type alert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	received    time.Time
}

// webhook is the user's endpoint Alertmanager pages: it keeps every alert
// notified, with when it came.
type webhook struct {
	srv    *http.Server
	addr   string
	mu     sync.Mutex
	alerts []alert
}

func startWebhook() (*webhook, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	w := &webhook{addr: l.Addr().String()}
	w.srv = &http.Server{Handler: w, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = w.srv.Serve(l) }()
	return w, nil
}

func (w *webhook) url() string { return "http://" + w.addr + "/agentguard" }

func (w *webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	var msg struct {
		Alerts []alert `json:"alerts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	now := time.Now()
	w.mu.Lock()
	for _, a := range msg.Alerts {
		a.received = now
		w.alerts = append(w.alerts, a)
	}
	w.mu.Unlock()
}

// waitFor returns the first firing alert named name whose labels include
// want, waiting until limit; ok false if none came.
func (w *webhook) waitFor(name string, want map[string]string, limit time.Duration) (alert, bool) {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if a, ok := w.find(name, want); ok {
			return a, true
		}
	}
	return w.find(name, want)
}

func (w *webhook) find(name string, want map[string]string) (alert, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range w.alerts {
		if a.Status == "firing" && a.Labels["alertname"] == name && includes(a.Labels, want) {
			return a, true
		}
	}
	return alert{}, false
}

func includes(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}
