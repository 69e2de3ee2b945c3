// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"context"
	"errors"
	"testing"
)

// holder is a decider that holds groups in their saved form and gives each
// up once.
type holder struct {
	recordingDecider
	groups      map[string][]byte
	fingerprint string
}

func (h *holder) HandOver(_ context.Context, group, fingerprint string) ([]byte, bool, error) {
	if fingerprint != h.fingerprint {
		return nil, false, errors.New("another configuration")
	}
	saved, ok := h.groups[group]
	delete(h.groups, group)
	return saved, ok, nil
}

// A processor takes a group over from the peer that holds it, by the
// processor's name: once (the holder forgets it), and not from a processor
// of another configuration; a peer that gives no answer, or where that
// processor has not registered while the collector starts (it may be
// restoring the group) or stops, is an error, so that the group is marked;
// once the pipelines run, a processor not registered does not run there.
func TestTakeOverFromThePeerThatHoldsIt(t *testing.T) {
	old, oldURL := startDecisions(t, nil)
	h := &holder{groups: map[string][]byte{"conv/1": []byte("saved state")}, fingerprint: "fp"}
	defer old.Register("temporalcheck/te", h)()
	down := silentPeer(t)
	fresh, _ := startDecisions(t, func(c *Config) { c.Peers = []string{oldURL} })
	tier, ok := TierFor(fresh, "temporalcheck/te")
	if !ok {
		t.Fatal("an endpoint with peers is not in a tier")
	}
	ctx := context.Background()
	other, _ := TierFor(fresh, "probguard")
	if _, found, err := other.TakeOver(ctx, "conv/1", "fp"); found || err == nil {
		t.Errorf("a processor not registered there while the collector starts: found %v, %v; want an error", found, err)
	}
	if err := old.Ready(); err != nil { // the pipelines run: a processor not registered does not run there
		t.Fatal(err)
	}
	if _, found, err := other.TakeOver(ctx, "conv/1", "fp"); found || err != nil {
		t.Errorf("a processor that does not run there: found %v, %v; want not held", found, err)
	}
	if _, found, err := tier.TakeOver(ctx, "conv/1", "other"); found || err == nil {
		t.Errorf("another configuration: found %v, %v; want an error", found, err)
	}
	saved, found, err := tier.TakeOver(ctx, "conv/1", "fp")
	if err != nil || !found || string(saved) != "saved state" {
		t.Fatalf("taken over: %q %v %v", saved, found, err)
	}
	if _, found, err := tier.TakeOver(ctx, "conv/1", "fp"); found || err != nil {
		t.Errorf("taken over twice: found %v, %v", found, err)
	}
	withDown, _ := startDecisions(t, func(c *Config) { c.Peers = []string{oldURL, down} })
	tier, _ = TierFor(withDown, "temporalcheck/te")
	if _, found, err := tier.TakeOver(ctx, "nobody", "fp"); found || err == nil {
		t.Errorf("a peer down: found %v, %v; want an error", found, err)
	}
	alone, _ := startDecisions(t, nil)
	if _, ok := TierFor(alone, "temporalcheck/te"); ok {
		t.Error("an endpoint without peers is in a tier")
	}
}
