// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/agentguard/agentguard/extension/riskendpoint/internal/metadata"
	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/fixtures"
)

// stoveGuard is the paper's stove model (spec V2's 30 traces) guarding
// "fork on the burner and knob on" at θ = 0.965, between P_safe(00) ≈ 0.9599
// and P_safe(10) ≈ 0.9685.
func stoveGuard(t *testing.T) *guard.Guard {
	t.Helper()
	sv, err := dtmc.NewSolver(dtmc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := guard.New(fixtures.Model(t, "testdata/stove.json"), guard.Options{
		Property:  dtmc.Property{Kind: dtmc.AlwaysSafe, Unsafe: "fork_on_burner and knob_on"},
		Threshold: 0.965, Report: guard.ReportCrossing, Unknown: guard.UnknownAlert,
	}, sv)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// startEndpoint runs the extension as a collector would, on a free
// loopback port, until the test ends; it returns its board and base URL.
func startEndpoint(t *testing.T) (Board, string) {
	t.Helper()
	return startEndpointWith(t, nil)
}

// startEndpointWith is startEndpoint with its configuration changed first
// (a change that sets the endpoint's address keeps it).
func startEndpointWith(t *testing.T, change func(*Config)) (Board, string) {
	t.Helper()
	var ext extension.Extension
	var cfg *Config
	onFreePorts(t, 1, func(addrs []string) error {
		cfg = createDefaultConfig()
		cfg.NetAddr.Endpoint = addrs[0]
		if change != nil {
			change(cfg)
		}
		var err error
		ext, err = startConfigured(t, cfg, componenttest.NewNopHost())
		if cfg.NetAddr.Endpoint != addrs[0] {
			return errors.Join(err, errNotRetried) // another port would not change it
		}
		return err
	})
	return ext.(Board), "http://" + cfg.NetAddr.Endpoint
}

// errNotRetried marks a failure onFreePorts is not to retry.
var errNotRetried = errors.New("not retried")

// onFreePorts runs start on n loopback addresses found free: a port found
// free is free only for now, and one another test takes meanwhile fails
// start with EADDRINUSE; start is then run again on others, a few times.
// start stops what it started before it fails.
func onFreePorts(t *testing.T, n int, start func(addrs []string) error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		err := start(freeAddrs(t, n))
		if err == nil {
			return
		}
		if !errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, errNotRetried) || attempt == 5 {
			t.Fatal(err)
		}
	}
}

// startConfigured creates and starts the extension on host, until the test
// ends; it returns Start's error (with nothing left running).
func startConfigured(t *testing.T, cfg *Config, host component.Host) (extension.Extension, error) {
	t.Helper()
	ext, err := NewFactory().Create(context.Background(), extensiontest.NewNopSettings(metadata.Type), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), host); err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		if err := ext.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return ext, nil
}

func get(t *testing.T, method, url string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

// A group's latest decision is served as the fixed-schema alert, from the
// moment it is published until its group ends.
func TestServesTheLatestDecision(t *testing.T) {
	board, base := startEndpoint(t)
	g := stoveGuard(t)
	url := base + "/v1/groups/conv%2F1" // a key with a slash, percent-encoded

	if code, _, body := get(t, http.MethodGet, url); code != http.StatusNotFound || !strings.Contains(body, `group \"conv/1\" is not open`) {
		t.Errorf("before the group opens: %d %s", code, body)
	}
	slot := board.Open("conv/1")
	if code, _, body := get(t, http.MethodGet, url); code != http.StatusNotFound || !strings.Contains(body, "no scored event yet") {
		t.Errorf("open, nothing scored: %d %s", code, body)
	}
	var run guard.Run
	at := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	slot.Publish(&Decision{Guard: g, Decision: g.Step(&run, 0b10), Group: "conv/1", Event: 1, At: at}) // knob on: 0.9685, safe
	risk := &Decision{Guard: g, Decision: g.Step(&run, 0b00), Group: "conv/1", Event: 2, At: at.Add(time.Second)}
	risk.SpanID[0] = 0xab
	slot.Publish(risk) // both off: 0.9599 < 0.965

	code, h, body := get(t, http.MethodGet, url)
	if code != http.StatusOK || h.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s %s", code, h.Get("Content-Type"), body)
	}
	var got Response
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if got.Group != "conv/1" || got.Event != 2 || got.State != "00" || !got.Warning || got.Kind != guard.KindRisk ||
		got.PSafe == nil || fmt.Sprintf("%.4f", *got.PSafe) != "0.9599" || got.Threshold != 0.965 {
		t.Errorf("alert %s", body)
	}
	if got.Rule != (guard.Rule{Property: "always_safe", Unsafe: "fork_on_burner and knob_on"}) || got.Evidence == nil ||
		!strings.HasPrefix(got.Explanation, "P(stay safe) = 0.9599 < 0.965 in state not fork_on_burner, not knob_on") {
		t.Errorf("rule, evidence or explanation: %s", body)
	}
	if got.SpanID != "ab00000000000000" || !got.DecidedAt.Equal(at.Add(time.Second)) {
		t.Errorf("span or time: %s", body)
	}

	board.Close("conv/1", slot)
	if code, _, _ := get(t, http.MethodGet, url); code != http.StatusNotFound {
		t.Errorf("after the group ended: %d, want 404", code)
	}
}

// A state the model never saw: P_safe is not known (null), and it is a
// warning under unknown_state: alert.
func TestUnknownState(t *testing.T) {
	g := stoveGuard(t)
	var run guard.Run
	a := g.Alert(g.Step(&run, 0b01), "g", 1) // the fork on the burner, the knob off: never seen
	if a.PSafe != nil || a.Kind != guard.KindUnknown || !a.Warning || a.Evidence != nil ||
		!strings.HasPrefix(a.Explanation, "state never seen in training") {
		t.Errorf("alert %+v", a)
	}
	b, err := json.Marshal(a)
	if err != nil || !strings.Contains(string(b), `"p_safe":null`) {
		t.Errorf("%s %v", b, err)
	}
}

// A slot closed after its key was opened again (a group ended and begun
// afresh, or a second processor) does not take the new one with it.
func TestCloseKeepsANewerSlot(t *testing.T) {
	b := newBoard()
	old := b.Open("g")
	newer := b.Open("g")
	b.Close("g", old)
	if _, open := b.latest("g"); !open || b.len() != 1 {
		t.Fatal("closing the old slot dropped the newer one")
	}
	b.Close("g", newer)
	if b.len() != 0 {
		t.Errorf("%d slots left", b.len())
	}
}

// Resume keeps the slot open under a key, with its latest decision, and
// makes one only when there is none.
func TestResumeKeepsTheOpenSlot(t *testing.T) {
	b := newBoard()
	open := b.Open("g")
	open.Publish(&Decision{Group: "g", Event: 3})
	if got := b.Resume("g"); got != open {
		t.Fatal("Resume made a new slot for an open group")
	}
	if d, _ := b.latest("g"); d == nil || d.Event != 3 {
		t.Fatalf("the latest decision after Resume: %+v", d)
	}
	b.Close("g", open)
	if fresh := b.Resume("g"); fresh == open || b.len() != 1 {
		t.Errorf("Resume after Close: the closed slot back, or %d slots", b.len())
	}
}

// What the endpoint refuses, and how.
func TestRefusals(t *testing.T) {
	board, base := startEndpoint(t)
	board.Open("g").Publish(&Decision{Guard: stoveGuard(t), Decision: guard.Decision{}, Group: "g", Event: 1})
	for _, c := range []struct {
		method, path string
		code         int
		says         string
	}{
		{http.MethodPost, "/v1/groups/g", http.StatusMethodNotAllowed, "only GET"},
		{http.MethodDelete, "/v1/groups/g", http.StatusMethodNotAllowed, "only GET"},
		{http.MethodHead, "/v1/groups/g", http.StatusMethodNotAllowed, ""},
		{http.MethodGet, "/v1/groups/", http.StatusBadRequest, "group key missing"},
		{http.MethodGet, "/v1/groups", http.StatusNotFound, "no such path"},
		{http.MethodGet, "/", http.StatusNotFound, "no such path"},
		{http.MethodGet, "/v2/groups/g", http.StatusNotFound, "no such path"},
		{http.MethodGet, "/v1/groups/h", http.StatusNotFound, "not open"},
		{http.MethodGet, "/v1/groups/g", http.StatusOK, `"group":"g"`},
	} {
		code, h, body := get(t, c.method, base+c.path)
		if code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("%s %s: %d %s, want %d with %q", c.method, c.path, code, body, c.code, c.says)
		}
		if code == http.StatusMethodNotAllowed && h.Get("Allow") != http.MethodGet {
			t.Errorf("%s %s: Allow %q", c.method, c.path, h.Get("Allow"))
		}
	}
}

// A port in use fails the start, naming the endpoint.
func TestPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cfg := createDefaultConfig()
	cfg.NetAddr.Endpoint = l.Addr().String()
	ext, err := NewFactory().Create(context.Background(), extensiontest.NewNopSettings(metadata.Type), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err == nil || !strings.Contains(err.Error(), l.Addr().String()) {
		t.Errorf("start on a port in use: %v", err)
	}
	if err := ext.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

// An extension created and shut down without being started (the collector
// does this when another component fails to start) returns no error.
func TestShutdownWithoutStart(t *testing.T) {
	ext, err := NewFactory().Create(context.Background(), extensiontest.NewNopSettings(metadata.Type), createDefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}
