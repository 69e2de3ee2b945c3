// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/agentguard/agentguard/internal/checkpoint"
	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/guard"
)

// A group's saved state: its run through the guard (the response
// monitor's state and the crossing flags), its path through learning (the
// last state counted), and how many events it has scored.

// Fingerprint identifies what a group's saved state depends on.
func (p *probProcessor) Fingerprint() string { return p.fingerprint }

// AppendState saves a group's state.
func (p *probProcessor) AppendState(b []byte, st *group) []byte {
	run := st.run.State()
	b = checkpoint.AppendVarint(b, int64(run.Monitor))
	b = checkpoint.AppendBool(b, run.Below)
	b = checkpoint.AppendBool(b, run.Violating)
	b = checkpoint.AppendBool(b, run.Unknown)
	last, started := st.path.State()
	b = checkpoint.AppendUvarint(b, uint64(last))
	b = checkpoint.AppendBool(b, started)
	return checkpoint.AppendUvarint(b, uint64(st.events))
}

// RestoreState rebuilds a group's state, with its slot at the risk
// endpoint: the one it had when it is still open there (a dormant group),
// else a new one.
func (p *probProcessor) RestoreState(key string, data []byte) (*group, error) {
	r := checkpoint.NewReader(data)
	var run guard.RunState
	run.Monitor = dtmc.MonitorState(r.Varint("monitor"))
	run.Below, run.Violating, run.Unknown = r.Bool("below"), r.Bool("violating"), r.Bool("unknown")
	last := dtmc.State(r.Uvarint("last state"))
	started := r.Bool("started")
	events := r.Uvarint("events")
	if err := r.End("group"); err != nil {
		return nil, err
	}
	if run.Monitor < 0 || events > 1<<40 {
		return nil, fmt.Errorf("monitor state %d or events %d out of range", run.Monitor, events)
	}
	st := &group{}
	if p.board != nil {
		st.slot = p.board.Resume(key) // a dormant group keeps its slot; any other finds none and gets a new one
	}
	st.run, st.path, st.events = guard.RunOf(run), guard.PathOf(last, started), int(events)
	return st, nil
}

// fingerprint is a digest of what a group's saved state depends on: the
// predicates (its states), the grouping, the property (its monitor) and
// the rules learning follows.
func (c *Config) fingerprint() (string, error) {
	data, err := json.Marshal(struct {
		Predicates any
		GroupBy    string
		Unsafe     string
		Property   any
		Rules      any
	}{c.Config, c.GroupBy, c.Unsafe, c.Property, c.ValidTransitions})
	if err != nil {
		return "", fmt.Errorf("storage: the configuration's fingerprint: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
