// SPDX-License-Identifier: Apache-2.0

// Command restart measures what a crash costs the cross-turn verdicts, on
// the real distribution (make dist): a collector judges the first turn of
// each conversation, checkpoints, and is killed with SIGKILL; a new one on
// the same file_storage directory gets the second turns (a second run kills
// it before any periodic checkpoint, the only one written that at its start,
// before any turn: the state written with the spans it passed on restores
// the conversations). Each conversation
// violates te3 across the two turns (the transfer to the weather agent, then
// a goodbye instead of an answer). It prints how many violations came after
// the restart, and how many were marked agentguard.history, with storage
// and without; it fails unless every one came, unmarked, with storage. A
// third run truncates the storage file while the collector is down: the
// next one must start all the same (without checkpoints, saying so), and
// every verdict it gives on the conversations that lost their first turns
// must be marked.
//
// Then the acknowledged spans: batches of conversation turns sent as an
// SDK's exporter sends them (a refused request is sent again) through a
// collector whose storage directory is on a 16 MB tmpfs of its own, to an
// OTLP exporter with a persistent sending queue (on another disk: see
// spansConfig); halfway, the collector is
// killed with SIGKILL and another started on the same storage, and in a
// second run the storage's disk is filled for 2 s. It fails unless every
// acknowledged span reaches the backend (spans.go).
//
//	make restart
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/fixtures/stovetrace"
	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/test/harness"
)

const config = `
extensions:
  file_storage/x:
    directory: %[1]s
receivers:
  otlp:
    protocols:
      http:
        endpoint: %[2]s
processors:
  temporalcheck:
    group_by: conversation
    wait: 300ms
    root_wait: 100ms
    group_timeout: 3s
    warm_up: %[4]s
    checkpoint_interval: %[6]s
    %[5]s
    predicates:
      xferToWeather: {tool: transfer_to_weather}
      getWeather: {tool: get_weather}
      xferToGreeting: {tool: transfer_to_greeting}
    assertions:
      - name: te3
        always: 'xferToWeather >> (getWeather | xferToGreeting)'
connectors:
  verdictlogs:
exporters:
  otlp_http/verdicts:
    logs_endpoint: http://%[3]s/v1/logs
    compression: none
service:
  extensions: [file_storage/x]
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [temporalcheck]
      exporters: [verdictlogs]
    logs:
      receivers: [verdictlogs]
      exporters: [otlp_http/verdicts]
`

func main() {
	bin := flag.String("bin", "dist/otelcol-agentguard", "the distribution (make dist)")
	n := flag.Int("conversations", 20, "conversations, each violating te3 across its two turns")
	batches := flag.Int("batches", 200, "batches of 20 conversation turns sent through each span fault")
	flag.Parse()
	ok := true
	for _, mode := range []string{withStorage, uncheckpointed, withoutStorage, damagedStorage} {
		got, marked, err := run(*bin, *n, mode)
		if err != nil {
			fmt.Fprintln(os.Stderr, "restart:", err)
			os.Exit(1)
		}
		fmt.Printf("%-27s: %d of %d cross-turn violations after kill -9 and restart, %d marked %s\n", mode, got, *n, marked, verdictattr.History)
		if mode == withStorage || mode == uncheckpointed {
			ok = ok && got == *n && marked == 0
		} else {
			ok = ok && marked == got // what a lost history yields is marked
		}
	}
	if !ok {
		fmt.Fprintln(os.Stderr, "restart: with storage, every cross-turn violation must come, unmarked, checkpointed or not; and every violation on a lost history marked")
		os.Exit(1)
	}
	for _, f := range []spanFault{{"kill -9 mid-stream", crash}, {"storage's disk full for 2 s", fullDisk}} {
		r, err := spansUnder(*bin, *batches, f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "restart: %s: %v\n", f.name, err)
			os.Exit(1)
		}
		fmt.Printf("%-27s: %s\n", f.name, r)
		if r.lost > 0 {
			fmt.Fprintf(os.Stderr, "restart: %s lost %d acknowledged spans\n", f.name, r.lost)
			os.Exit(1)
		}
	}
}

// spansUnder runs the spans through a collector whose storage directory is
// on a small file system of its own (a tmpfs, mounted here: CI runs as
// root), so that filling it fills only the storage's disk.
func spansUnder(bin string, batches int, f spanFault) (spanRun, error) {
	dir, err := os.MkdirTemp("", "agentguard-spans-*")
	if err != nil {
		return spanRun{}, err
	}
	defer os.RemoveAll(dir)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", dir).CombinedOutput(); err != nil {
		return spanRun{}, fmt.Errorf("mounting a 16 MB tmpfs for the storage (needs root): %v: %s", err, out)
	}
	defer exec.Command("umount", dir).Run()
	return runSpans(bin, batches, f, dir)
}

// The runs: with storage, killed after a checkpoint or before any, without
// storage, and with the storage file truncated while the collector is down.
const (
	withStorage    = "storage"
	uncheckpointed = "storage, no checkpoint yet"
	withoutStorage = "no storage"
	damagedStorage = "storage, file truncated"
)

// run plays the first turns into one collector, kills it once it has
// checkpointed them (uncheckpointed: once it has passed them on, its first
// periodic checkpoint an hour away), and plays the second turns into the next.
func run(bin string, n int, mode string) (got, marked int, err error) {
	storage := mode != withoutStorage
	sink, err := harness.StartLogSink()
	if err != nil {
		return 0, 0, err
	}
	defer sink.Close()
	dir, err := os.MkdirTemp("", "agentguard-restart-*")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	storageLine := ""
	if storage {
		storageLine = "storage: file_storage/x"
	}
	start := func(warmUp, interval string) (*harness.Collector, string, error) {
		addrs, err := harness.FreeAddrs(1)
		if err != nil {
			return nil, "", err
		}
		addr := addrs[0]
		path := filepath.Join(dir, "config-"+warmUp+".yaml")
		if err := os.WriteFile(path, fmt.Appendf(nil, config, dir, addr, sink.Addr(), warmUp, storageLine, interval), 0o600); err != nil {
			return nil, "", err
		}
		col, err := harness.StartCollector(harness.CollectorOptions{Bin: bin, Configs: []string{path},
			Log: filepath.Join(dir, "collector-"+warmUp+".log")})
		return col, addr, err
	}
	// The first collector: none ran before it.
	interval := "500ms"
	if mode == uncheckpointed {
		interval = "1h"
	}
	first, addr, err := start("0s", interval)
	if err != nil {
		return 0, 0, err
	}
	if err := post(addr, n, 3, "transfer_to_weather"); err != nil {
		first.Kill()
		return 0, 0, err
	}
	time.Sleep(1500 * time.Millisecond) // released after wait, passed on, then checkpointed
	first.Kill()
	if mode == damagedStorage {
		if err := truncateStorage(dir); err != nil {
			return 0, 0, err
		}
	}
	// The next one: a crash came before it, so its warm-up is on.
	second, addr, err := start("3s", "500ms")
	if err != nil {
		return 0, 0, err
	}
	if err := post(addr, n, 5, "say_goodbye"); err != nil {
		second.Kill()
		return 0, 0, err
	}
	sink.WaitQuiet(time.Second, 10*time.Second)
	second.Stop()
	for _, r := range sink.Records() {
		a := r.Attributes()
		if v, _ := a.Get(verdictattr.ScoreLabel); v.Str() != verdictattr.LabelFail {
			continue
		}
		got++
		if _, ok := a.Get(verdictattr.History); ok {
			marked++
		}
	}
	return got, marked, nil
}

// truncateStorage cuts every storage file in dir short, as a disk failure
// or a copy cut off would.
func truncateStorage(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "processor_*"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no storage file in %s to damage (%v)", dir, err)
	}
	for _, f := range files {
		if err := os.Truncate(f, 5000); err != nil {
			return err
		}
	}
	return nil
}

// post sends turn of every conversation, each its own trace, as OTLP/JSON.
func post(addr string, n, turn int, tool string) error {
	td := ptrace.NewTraces()
	for c := range n {
		stovetrace.Trace(c*10+turn, fmt.Sprintf("conv-%02d", c), stovetrace.ToolCall{Tool: tool}).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	}
	body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		return err
	}
	_, err = harness.PostTraces(addr, "application/json", body)
	return err
}
