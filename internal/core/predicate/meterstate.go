// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/checkpoint"
)

// meterStates are a group's meters, one per meterOp of its Set.
type meterStates struct {
	states []meterState
}

// meterState is one meter's state in one group. A budget keeps a total per
// name (one, "", without per); repeats its window of the last call keys,
// oldest first; no_progress a streak per tool.
type meterState struct {
	totals  map[string]float64
	window  []uint64
	streaks map[string]streak
	traj    trajectoryState
	flow    flowState
}

type streak struct {
	hash uint64
	n    int
}

func newMeterStates(n int) *meterStates {
	return &meterStates{states: make([]meterState, n)}
}

// step folds one span's measurement and returns the meters' bits there.
func (ms *meterStates) step(ops []meterOp, m *Measurement, span ptrace.Span) uint64 {
	if m == nil {
		return 0
	}
	var bits uint64
	for i := range ops {
		r := m.reads[i]
		if !r.ok {
			continue
		}
		if text, holds := ms.states[i].step(&ops[i], r); holds {
			bits |= 1 << ops[i].out
			note(span, ops[i].name+": "+text)
		}
	}
	return bits
}

func (s *meterState) step(op *meterOp, r meterRead) (string, bool) {
	switch op.kind {
	case budgetMeter:
		return s.budget(op, r)
	case repeatsMeter:
		return s.repeat(op, r)
	case trajectoryMeter:
		return op.traj.step(&s.traj, r)
	case flowMeter:
		return op.flow.step(&s.flow, r)
	}
	return s.progress(op, r)
}

// budget adds a value; it holds where the aggregate first exceeds the bound.
func (s *meterState) budget(op *meterOp, r meterRead) (string, bool) {
	if s.totals == nil {
		s.totals = map[string]float64{}
	}
	prev := s.totals[r.name]
	total := prev + r.value
	if op.agg == aggMax {
		total = max(prev, r.value)
	}
	s.totals[r.name] = total
	if prev > op.max || total <= op.max {
		return "", false
	}
	agg := map[aggregation]string{aggSum: "sum", aggCount: "count", aggMax: "largest"}[op.agg]
	text := fmt.Sprintf("%s of %s reached %s here, over the budget of %s", agg, op.quantity, figure(total), figure(op.max))
	if r.name != "" {
		text += " for " + op.per + " " + r.name
	}
	return text, true
}

// repeat pushes a call key; it holds where the key's count in the window
// reaches n.
func (s *meterState) repeat(op *meterOp, r meterRead) (string, bool) {
	count := 1
	for _, h := range s.window {
		if h == r.hash {
			count++
		}
	}
	if len(s.window) == op.within {
		s.window = s.window[1:]
	}
	s.window = append(s.window, r.hash)
	if count != op.n {
		return "", false
	}
	what := "with the same arguments"
	switch {
	case op.toolOnly:
		what = "called"
	case op.result:
		what = "with the same result"
	}
	return fmt.Sprintf("tool %s %s %d times in the last %d tool calls", r.name, what, count, op.within), true
}

// progress extends or restarts a tool's streak of equal results; it holds
// where the streak reaches k.
func (s *meterState) progress(op *meterOp, r meterRead) (string, bool) {
	if s.streaks == nil {
		s.streaks = map[string]streak{}
	}
	st := s.streaks[r.name]
	if st.n > 0 && st.hash == r.hash {
		st.n++
	} else {
		st = streak{hash: r.hash, n: 1}
	}
	s.streaks[r.name] = st
	if st.n != op.n {
		return "", false
	}
	return fmt.Sprintf("tool %s returned the same result %d calls in a row", r.name, st.n), true
}

func figure(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// clone is a deep copy: a hypothesis must not change the group's meters.
func (ms *meterStates) clone() *meterStates {
	if ms == nil {
		return nil
	}
	out := &meterStates{states: make([]meterState, len(ms.states))}
	for i, s := range ms.states {
		out.states[i] = meterState{window: slices.Clone(s.window),
			traj: trajectoryState{next: s.traj.next, left: slices.Clone(s.traj.left), done: s.traj.done},
			flow: flowState{seen: slices.Clone(s.flow.seen)}}
		if s.totals != nil {
			out.states[i].totals = make(map[string]float64, len(s.totals))
			for k, v := range s.totals {
				out.states[i].totals[k] = v
			}
		}
		if s.streaks != nil {
			out.states[i].streaks = make(map[string]streak, len(s.streaks))
			for k, v := range s.streaks {
				out.states[i].streaks[k] = v
			}
		}
	}
	return out
}

// appendTo writes the meters for a checkpoint: per meter, its totals
// (name, value bits), its window, its streaks (tool, hash, length), each
// map in key order so that equal states write equal bytes, and its
// trajectory's progress (next call, whether it held, the calls left), and
// a flow's values (value, detector, tool: the checkpoint holds what the
// spans held).
func (ms *meterStates) appendTo(b []byte) []byte {
	b = checkpoint.AppendUvarint(b, uint64(len(ms.states)))
	for _, s := range ms.states {
		names := slices.Sorted(maps.Keys(s.totals))
		b = checkpoint.AppendUvarint(b, uint64(len(names)))
		for _, k := range names {
			b = checkpoint.AppendString(b, k)
			b = checkpoint.AppendUvarint(b, math.Float64bits(s.totals[k]))
		}
		b = checkpoint.AppendUvarint(b, uint64(len(s.window)))
		for _, h := range s.window {
			b = checkpoint.AppendUvarint(b, h)
		}
		tools := slices.Sorted(maps.Keys(s.streaks))
		b = checkpoint.AppendUvarint(b, uint64(len(tools)))
		for _, k := range tools {
			b = checkpoint.AppendString(b, k)
			b = checkpoint.AppendUvarint(b, s.streaks[k].hash)
			b = checkpoint.AppendUvarint(b, uint64(s.streaks[k].n))
		}
		b = checkpoint.AppendUvarint(b, uint64(s.traj.next))
		b = checkpoint.AppendBool(b, s.traj.done)
		b = checkpoint.AppendUvarint(b, uint64(len(s.traj.left)))
		for _, n := range s.traj.left {
			b = checkpoint.AppendUvarint(b, uint64(n))
		}
		b = checkpoint.AppendUvarint(b, uint64(len(s.flow.seen)))
		for _, v := range s.flow.seen {
			b = checkpoint.AppendString(checkpoint.AppendString(checkpoint.AppendString(b, v.value), v.detector), v.tool)
		}
	}
	return b
}

// restore reads what appendTo wrote, for ops; a state of another
// configuration (another number of meters, a window longer than within) is
// refused.
func (ms *meterStates) restore(ops []meterOp, data []byte) error {
	r := checkpoint.NewReader(data)
	if n := r.Uvarint("meters"); r.Err() == nil && int(n) != len(ops) {
		return fmt.Errorf("meter state of %d meters: %d are configured", n, len(ops))
	}
	states := make([]meterState, len(ops))
	for i := range ops {
		s := &states[i]
		field := func(name string) string { return fmt.Sprintf("meter %d: %s", i+1, name) }
		for range r.Count(field("totals"), 2) {
			if s.totals == nil {
				s.totals = map[string]float64{}
			}
			k := r.String(field("name"))
			s.totals[k] = math.Float64frombits(r.Uvarint(field("total")))
		}
		for range r.Count(field("window"), 1) {
			s.window = append(s.window, r.Uvarint(field("key")))
		}
		if len(s.window) > max(ops[i].within, 0) {
			return fmt.Errorf("meter %d: a window of %d keys, within is %d", i+1, len(s.window), ops[i].within)
		}
		for range r.Count(field("streaks"), 3) {
			if s.streaks == nil {
				s.streaks = map[string]streak{}
			}
			k := r.String(field("tool"))
			s.streaks[k] = streak{hash: r.Uvarint(field("result")), n: int(r.Uvarint(field("streak")))}
		}
		if err := s.restoreTrajectory(r, ops[i].traj, field); err != nil {
			return err
		}
		for range r.Count(field("flow values"), 3) {
			s.flow.seen = append(s.flow.seen, flowValue{r.String(field("value")), r.String(field("detector")), r.String(field("tool"))})
		}
		if len(s.flow.seen) > maxFlowValues {
			return fmt.Errorf("meter %d: %d flow values, at most %d are kept", i+1, len(s.flow.seen), maxFlowValues)
		}
	}
	if err := r.End("meters"); err != nil {
		return err
	}
	ms.states = states
	return nil
}

// restoreTrajectory reads a trajectory's progress; one that does not fit
// the reference (more calls than it has) is refused.
func (s *meterState) restoreTrajectory(r *checkpoint.Reader, plan *trajectoryPlan, field func(string) string) error {
	s.traj.next = int(r.Uvarint(field("next call")))
	s.traj.done = r.Bool(field("held"))
	for range r.Count(field("calls left"), 1) {
		s.traj.left = append(s.traj.left, int(r.Uvarint(field("count"))))
	}
	if r.Err() != nil {
		return nil // the caller's End reports it
	}
	calls, keys := 0, 0
	if plan != nil {
		calls, keys = len(plan.calls), len(plan.keys)
	}
	if s.traj.next > calls || (s.traj.left != nil && len(s.traj.left) != keys) {
		return fmt.Errorf("a trajectory's progress (call %d, %d keys left) does not fit a reference of %d calls, %d distinct", s.traj.next, len(s.traj.left), calls, keys)
	}
	return nil
}
