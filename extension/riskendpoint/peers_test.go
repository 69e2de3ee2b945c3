// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
)

// In a tier, any collector answers for the one that holds the group: a
// question about a group not held here is the peer's answer; about a group
// no one holds, not held (and stale when a peer could not be asked: then
// on_stale alone decides, not an answer as a new group's); a
// forwarded question is never forwarded again (two peers of each other do
// not loop).
func TestPeersAnswerForTheGroupTheyHold(t *testing.T) {
	down := silentPeer(t)
	// Each the other's peer; a third peer gives no answer.
	var owner, asker *endpoint
	var ownerURL, askerURL string
	onFreePorts(t, 2, func(addrs []string) error {
		ownerURL, askerURL = "http://"+addrs[0], "http://"+addrs[1]
		o, err := startConfigured(t, peerConfig(addrs[0], askerURL), componenttest.NewNopHost())
		if err != nil {
			return err
		}
		a, err := startConfigured(t, peerConfig(addrs[1], ownerURL, down), componenttest.NewNopHost())
		if err != nil {
			return errors.Join(err, o.Shutdown(context.Background()))
		}
		owner, asker = o.(*endpoint), a.(*endpoint)
		return nil
	})
	holds := &recordingDecider{open: true, answer: Answer{Events: 2,
		Reasons: []Reason{{Processor: "temporalcheck/te", Assertion: "te1", Effect: Deny, Explanation: "expected sayHello"}}}}
	defer owner.Register("temporalcheck/te", onlyGroup{"conv-1", holds})()
	// Not held at the asker, which judges the action as a new group's first
	// event, and would deny it.
	asNew := Answer{Reasons: []Reason{{Processor: "temporalcheck/te", Assertion: "te9", Effect: Deny, Explanation: "as a new group"}}}
	defer asker.Register("temporalcheck/te", &recordingDecider{open: false, answer: asNew})()
	alone, aloneURL := startDecisions(t, func(c *Config) { c.Peers = []string{ownerURL} })
	defer alone.Register("temporalcheck/te", &recordingDecider{open: false})()

	status, d, raw := post(t, aloneURL+"/v1/groups/conv-1/decisions", `{"action": {"tool": "get_weather"}}`)
	if status != http.StatusOK || d.Decision != Deny || d.Group == nil || *d.Group != "conv-1" || d.Event != 3 || d.Stale {
		t.Errorf("asked a collector that does not hold it: %d %s", status, raw)
	}
	if _, d, raw := post(t, aloneURL+"/v1/groups/nobody/decisions", `{"action": {"tool": "get_weather"}}`); d.Group != nil || d.Stale || d.Decision != Allow {
		t.Errorf("a group no one holds: %s", raw)
	}
	if _, d, raw := post(t, askerURL+"/v1/groups/conv-1/decisions", `{"action": {"tool": "get_weather"}}`); d.Decision != Deny || d.Stale {
		t.Errorf("the owner up, another peer down: %s", raw)
	}
	if _, d, raw := post(t, askerURL+"/v1/groups/nobody/decisions", `{"action": {"tool": "get_weather"}}`); d.Group != nil || !d.Stale ||
		!strings.Contains(raw, "1 of 2 peers gave no answer") || d.Decision != Allow || strings.Contains(raw, "te9") {
		t.Errorf("a group no one holds, a peer down (it may hold it): %s; want on_stale (allow) alone to decide", raw)
	}
	if n := len(holds.groups); n != 2 {
		t.Errorf("the owner was asked %d times, want 2 (a forwarded question is not forwarded again)", n)
	}
}

// peerConfig is the default configuration listening on addr, in a tier
// with peers.
func peerConfig(addr string, peers ...string) *Config {
	cfg := createDefaultConfig()
	cfg.NetAddr.Endpoint, cfg.Peers = addr, peers
	return cfg
}

// freeAddrs is n distinct loopback addresses nothing listens on, for now.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		addrs[i] = l.Addr().String()
	}
	return addrs
}

// silentPeer is the URL of a peer that gives no answer: it closes every
// connection as it comes. Its port stays taken until the test ends, so no
// endpoint the test starts can be given it (a port merely found free can).
func silentPeer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return "http://" + l.Addr().String()
}

// onlyGroup holds one group: it answers the others as not held.
type onlyGroup struct {
	group string
	d     *recordingDecider
}

func (o onlyGroup) Decide(ctx context.Context, q Question) (Answer, error) {
	if q.Group != o.group {
		return Answer{}, nil
	}
	return o.d.Decide(ctx, q)
}
