// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// planned is a conversation the app was to play (its conversations.jsonl):
// expect is the assertion that must catch it, empty for a correct one.
type planned struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Expect string `json:"expect"`
}

// outcome is an app's line for one conversation.
type outcome struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	Completed bool       `json:"completed"`
	Error     string     `json:"error"`
	Ran       []ran      `json:"ran"`
	Decisions []decision `json:"decisions"`
}

// ran is a call that executed: a tool, or a hand-off that took effect.
type ran struct {
	Agent      string         `json:"agent"`
	Tool       string         `json:"tool"`
	Args       map[string]any `json:"args"`
	TransferTo string         `json:"transfer_to"`
}

type decision struct {
	Decision string `json:"decision"`
	Error    string `json:"error"`
}

// greetingAgent is the weather team's greeter; servedCities the cities its
// weather agent serves (guard.yaml's knownCity).
const greetingAgent = "greeting_agent"

var servedCities = map[string]bool{"London": true, "Paris": true, "Tokyo": true, "New York": true}

// mistakes are the calls that ran and should not have, whatever the kind of
// the conversation: a transfer of an agent to itself, a second transfer to
// the greeting agent, a lookup of a city not served, a lookup right after a
// lookup. A call that breaks several rules counts once.
func (o outcome) mistakes() int {
	n, greetings := 0, 0
	for i, r := range o.Ran {
		wrong := false
		switch {
		case r.TransferTo != "":
			wrong = r.TransferTo == r.Agent
			if r.TransferTo == greetingAgent {
				greetings++
				wrong = wrong || greetings > 1
			}
		case r.Tool == "get_weather":
			city, _ := r.Args["city"].(string)
			wrong = !servedCities[city] || (i > 0 && o.Ran[i-1].Tool == "get_weather")
		}
		n += b2i(wrong)
	}
	return n
}

// keptControl: the greeting agent got control and never handed it back.
func (o outcome) keptControl() bool {
	held := false
	for _, r := range o.Ran {
		if r.TransferTo != "" {
			held = r.TransferTo == greetingAgent
		}
	}
	return held
}

func (o outcome) count(what string) int {
	n := 0
	for _, d := range o.Decisions {
		n += b2i(d.Decision == what)
	}
	return n
}

func (o outcome) guardErrors() int {
	n := 0
	for _, d := range o.Decisions {
		n += b2i(d.Error != "")
	}
	return n
}

// readPlanned reads the app's conversations.jsonl.
func readPlanned(path string) ([]planned, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the app's plan: %w", err)
	}
	var out []planned
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var p planned
		if err := json.Unmarshal(line, &p); err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, line, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// parseOutcomes reads the app's outcome lines (its other stdout lines, a
// framework's own log, are skipped) and keeps them in path.
func parseOutcomes(stdout []byte, path string) ([]outcome, error) {
	var out []outcome
	var kept bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 1024*1024), 64*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte(`{"id":`)) {
			continue
		}
		var o outcome
		if err := json.Unmarshal(line, &o); err != nil {
			return nil, fmt.Errorf("the app's outcome line %q: %w", line, err)
		}
		out = append(out, o)
		kept.Write(line)
		kept.WriteByte('\n')
	}
	return out, errors.Join(sc.Err(), os.WriteFile(path, kept.Bytes(), 0o644))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
