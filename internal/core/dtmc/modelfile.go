// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// ModelVersion is the version of the JSON model file this package writes.
const ModelVersion = 1

// modelFile is the JSON model: everything needed to reproduce every
// probability (predicates, smoothing, rules, state space, counts), plus the
// probabilities themselves for a reader, checked against the counts on load.
type modelFile struct {
	Version     int             `json:"version"`
	Predicates  []string        `json:"predicates"`
	Smoothing   Smoothing       `json:"smoothing"`
	Rules       Rules           `json:"rules"`
	Unsafe      string          `json:"unsafe,omitempty"`
	States      []string        `json:"states"`
	Traces      json.Number     `json:"traces"`
	Starts      []startEntry    `json:"starts"`
	Counts      []countEntry    `json:"counts"`
	Transitions []transitionOut `json:"transitions,omitempty"`
}

type startEntry struct {
	State string      `json:"state"`
	N     json.Number `json:"n"`
}

type countEntry struct {
	From string      `json:"from"`
	To   string      `json:"to"`
	N    json.Number `json:"n"`
}

type transitionOut struct {
	From string      `json:"from"`
	To   string      `json:"to"`
	P    json.Number `json:"p"`
}

// WriteJSON writes the model file.
func (m *Model) WriteJSON(w io.Writer) error {
	n := len(m.spec.Predicates)
	f := modelFile{Version: ModelVersion, Predicates: m.spec.Predicates, Smoothing: m.spec.Smoothing,
		Rules: m.spec.Rules, Unsafe: m.spec.Unsafe, Traces: json.Number(strconv.FormatUint(m.counts.Traces(), 10)),
		Starts: []startEntry{}, Counts: []countEntry{}}
	for _, s := range m.states {
		f.States = append(f.States, s.Name(n))
		if k := m.counts.Starts(s); k > 0 {
			f.Starts = append(f.Starts, startEntry{s.Name(n), json.Number(strconv.FormatUint(k, 10))})
		}
	}
	for _, pc := range m.counts.Pairs() {
		f.Counts = append(f.Counts, countEntry{pc.From.Name(n), pc.To.Name(n), json.Number(strconv.FormatUint(pc.N, 10))})
	}
	for i := range m.states {
		cols, probs := m.chain.Row(i)
		for k, t := range cols {
			p := strconv.FormatFloat(probs[k], 'g', -1, 64)
			f.Transitions = append(f.Transitions, transitionOut{m.StateName(i), m.StateName(int(t)), json.Number(p)})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

// ReadModel reads a model file; name is used in messages. It rejects an
// unknown version, unknown fields and states, counts that are not
// non-negative integers, and listed transitions whose rows do not sum to 1
// within RowTolerance, that are negative or not numbers, or that disagree
// with the probabilities the counts give.
func ReadModel(r io.Reader, name string) (*Model, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var probe struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%s: %s", name, jsonError(data, err))
	}
	if probe.Version == nil || *probe.Version != ModelVersion {
		v := "missing"
		if probe.Version != nil {
			v = strconv.Itoa(*probe.Version)
		}
		return nil, fmt.Errorf("%s: version %s: this agentguard reads model files of version %d", name, v, ModelVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var f modelFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %s", name, jsonError(data, err))
	}
	m, err := f.model()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// jsonError adds the line to a syntax or type error.
func jsonError(data []byte, err error) string {
	var offset int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		offset = se.Offset
	case errors.As(err, &te):
		offset = te.Offset
	}
	if offset < 0 || offset > int64(len(data)) {
		return err.Error()
	}
	return fmt.Sprintf("line %d: %v", 1+bytes.Count(data[:offset], []byte("\n")), err)
}

func (f *modelFile) model() (*Model, error) {
	spec := Spec{Predicates: f.Predicates, Smoothing: f.Smoothing, Rules: f.Rules, Unsafe: f.Unsafe}
	n := len(f.Predicates)
	states := make([]State, len(f.States))
	known := map[string]State{}
	for i, name := range f.States {
		s, err := ParseState(name, n)
		if err != nil {
			return nil, fmt.Errorf("states[%d]: %w", i, err)
		}
		states[i], known[name] = s, s
	}
	state := func(field, name string) (State, error) {
		s, ok := known[name]
		if !ok {
			return 0, fmt.Errorf("%s: unknown state %q (not in states)", field, name)
		}
		return s, nil
	}
	counts := NewCounts()
	for i, e := range f.Counts {
		field := fmt.Sprintf("counts[%d]", i)
		from, err := state(field+".from", e.From)
		if err != nil {
			return nil, err
		}
		to, err := state(field+".to", e.To)
		if err != nil {
			return nil, err
		}
		k, err := countValue(field+".n", e.N)
		if err != nil {
			return nil, err
		}
		counts.Add(from, to, k)
	}
	for i, e := range f.Starts {
		field := fmt.Sprintf("starts[%d]", i)
		s, err := state(field+".state", e.State)
		if err != nil {
			return nil, err
		}
		k, err := countValue(field+".n", e.N)
		if err != nil {
			return nil, err
		}
		counts.AddStarts(s, k)
	}
	if traces, err := countValue("traces", f.Traces); err != nil {
		return nil, err
	} else if traces != counts.Traces() {
		return nil, fmt.Errorf("traces %d: the starts add up to %d", traces, counts.Traces())
	}
	m, err := NewModel(spec, states, counts)
	if err != nil {
		return nil, err
	}
	return m, f.checkTransitions(m, state)
}

func countValue(field string, v json.Number) (uint64, error) {
	if v == "" {
		return 0, nil
	}
	k, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %s: want a non-negative integer", field, v)
	}
	return k, nil
}

// checkTransitions verifies the listed probabilities: each a number in
// [0, 1], each row summing to 1, each equal to the learned one.
func (f *modelFile) checkTransitions(m *Model, state func(field, name string) (State, error)) error {
	if len(f.Transitions) == 0 {
		return nil
	}
	sums := make([]float64, len(m.states))
	listed := make([]bool, len(m.states))
	for i, e := range f.Transitions {
		field := fmt.Sprintf("transitions[%d]", i)
		from, err := state(field+".from", e.From)
		if err != nil {
			return err
		}
		to, err := state(field+".to", e.To)
		if err != nil {
			return err
		}
		p, err := strconv.ParseFloat(string(e.P), 64)
		if err != nil || math.IsNaN(p) || math.IsInf(p, 0) || p < 0 || p > 1 {
			return fmt.Errorf("%s.p %s: want a probability in [0, 1]", field, e.P)
		}
		si, ti := m.index[from], m.index[to]
		if learned := m.chain.Prob(si, ti); math.Abs(learned-p) > RowTolerance {
			return fmt.Errorf("%s: P(%s | %s) = %s, but the counts give %s", field, e.To, e.From, e.P, strconv.FormatFloat(learned, 'g', -1, 64))
		}
		sums[si] += p
		listed[si] = true
	}
	for i, sum := range sums {
		if listed[i] && math.Abs(sum-1) > RowTolerance {
			return fmt.Errorf("transitions from %s sum to %.17g, want 1 (within %g)", m.StateName(i), sum, RowTolerance)
		}
	}
	return nil
}

// Labels are the model's labels for PRISM: init (the states traces started
// in, or state 0 if none), deadlock (none: every row is stochastic), one a
// predicate, end, and unsafe if the model has the formula.
func (m *Model) Labels() []Label {
	ns := len(m.states)
	initL := Label{"init", make([]bool, ns)}
	for i, s := range m.states {
		initL.States[i] = m.counts.Starts(s) > 0
	}
	if m.counts.Traces() == 0 {
		initL.States[0] = true
	}
	labels := []Label{initL, {"deadlock", make([]bool, ns)}}
	for k, p := range m.spec.Predicates {
		l := Label{p, make([]bool, ns)}
		for i, s := range m.states {
			l.States[i] = s != End && s&(1<<uint(k)) != 0
		}
		labels = append(labels, l)
	}
	if _, clash := FindLabel(labels, EndName); !clash {
		l := Label{EndName, make([]bool, ns)}
		l.States[ns-1] = true
		labels = append(labels, l)
	}
	if _, clash := FindLabel(labels, "unsafe"); !clash && m.unsafe != nil {
		labels = append(labels, Label{"unsafe", m.Label(m.unsafe)})
	}
	return labels
}

// InitialState is the state most traces started in (the lowest index on a
// tie, 0 with no traces), PRISM's init.
func (m *Model) InitialState() int {
	best := 0
	for i, s := range m.states {
		if m.counts.Starts(s) > m.counts.Starts(m.states[best]) {
			best = i
		}
	}
	return best
}

// StateNames lists every state's name, index order.
func (m *Model) StateNames() []string {
	names := make([]string, len(m.states))
	for i := range m.states {
		names[i] = m.StateName(i)
	}
	return names
}

// WriteFile writes the model file at path atomically: into a temporary file
// beside it, synced, then renamed over it, so that a reader or a crash never
// sees a torn file.
func (m *Model) WriteFile(path string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if err = m.WriteJSON(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err = tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err = tmp.Chmod(fileMode(path)); err != nil {
		tmp.Close()
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// fileMode keeps the mode of the file replaced, else 0644 (CreateTemp's is
// 0600, which readers running as another user could not open).
func fileMode(path string) os.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return 0o644
}

// syncDir makes the rename durable where the platform allows it; a failure
// leaves the file in place, only perhaps not yet on disk.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
