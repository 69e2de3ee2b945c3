// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agentguard/agentguard/internal/checkpoint/checkpointtest"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/fixtures"
)

// startOnStore starts the stove configuration grouped by conversation on
// the store, checkpointing every interval (0: the default).
func startOnStore(t *testing.T, store *checkpointtest.Store, interval time.Duration) *probProcessor {
	t.Helper()
	storageID := component.MustNewIDWithName("file_storage", "x")
	cfg := stoveConfig(t)
	cfg.GroupBy, cfg.Storage = "conversation", &storageID
	if interval > 0 {
		cfg.CheckpointInterval = interval
	}
	cfg.WarmUp = new(time.Duration)
	p, err := NewFactory().CreateTraces(context.Background(), nopSettings(), cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), store.Host(storageID)); err != nil {
		t.Fatal(err)
	}
	return p.(*probProcessor)
}

// A conversation open at a shutdown with storage is restored at the next
// start; a group's state (its run, its path through learning, its events)
// round-trips, and a truncated one is refused.
func TestCheckpointContinuesTheConversation(t *testing.T) {
	store := checkpointtest.NewStore()
	start := func() *probProcessor { return startOnStore(t, store, 0) }
	p := start()
	feed(t, p, fixtures.StoveTrace(0, "c1", fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "turn_on_stove"}))
	shutdown(t, p)
	p2 := start()
	defer shutdown(t, p2)
	if p2.OpenGroups() != 1 {
		t.Fatalf("%d groups restored, want 1", p2.OpenGroups())
	}
	st := &group{events: 2, run: guard.RunOf(guard.RunState{Monitor: 1, Below: true}), path: guard.PathOf(3, true)}
	saved := p2.AppendState(nil, st)
	back, err := p2.RestoreState("c1", saved)
	if err != nil || back.events != 2 || back.run != st.run || back.path != st.path {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	if _, err := p2.RestoreState("c1", saved[:len(saved)-1]); err == nil {
		t.Error("a truncated state was accepted")
	}
}

// Killed after scoring a turn and before any checkpoint, the next start
// restores the conversation from the state written with its spans.
func TestAKillBeforeAnyCheckpointLosesNoScoredTurn(t *testing.T) {
	store := checkpointtest.NewStore()
	start := func() *probProcessor { return startOnStore(t, store, time.Hour) }
	p := start()
	feed(t, p, fixtures.StoveTrace(0, "c1", fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "turn_on_stove"}))
	// killed: no Shutdown; its goroutines stop at the end of the test.
	defer func() { store.Fail = errors.New("the killed collector writes nothing"); shutdown(t, p) }()
	p2 := start()
	defer shutdown(t, p2)
	if p2.OpenGroups() != 1 {
		t.Fatalf("%d groups restored, want c1", p2.OpenGroups())
	}
}
