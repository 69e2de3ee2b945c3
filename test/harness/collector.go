// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// readyLine is what a collector logs once every pipeline has started.
const readyLine = "Everything is ready"

// startTimeout bounds the wait for a collector that neither starts nor exits.
const startTimeout = 60 * time.Second

// tailLines is how many of the collector's last lines an exit error quotes.
const tailLines = 10

// CollectorOptions say which collector to run, and how.
type CollectorOptions struct {
	Bin     string   // the collector binary
	Configs []string // --config, merged in order
	Sets    []string // --set, after the configurations
	Env     []string // added to this process's environment
	Log     string   // where its stdout and stderr go; a temporary file when empty
}

// Collector is a running collector process.
type Collector struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
	err    error // why it exited, once exited is closed
}

// StartCollector runs the collector and returns once it is ready; if it
// exits first, the error is the collector's own.
func StartCollector(o CollectorOptions) (*Collector, error) {
	var f *os.File
	var err error
	if o.Log == "" {
		f, err = os.CreateTemp("", "otelcol-*.log")
	} else {
		f, err = os.Create(o.Log)
	}
	if err != nil {
		return nil, err
	}
	var args []string
	for _, c := range o.Configs {
		args = append(args, "--config", c)
	}
	for _, s := range o.Sets {
		args = append(args, "--set", s)
	}
	p := &Collector{cmd: exec.Command(o.Bin, args...), log: f.Name(), exited: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), o.Env...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w (is it built? make dist, make router)", o.Bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		f.Close()
		close(p.exited)
	}()
	for deadline := time.Now().Add(startTimeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err := p.Alive(); err != nil {
			return nil, err
		}
		if b, _ := os.ReadFile(p.log); strings.Contains(string(b), readyLine) {
			return p, nil
		}
	}
	p.Stop()
	return nil, fmt.Errorf("%s was not ready within %v; its log: %s", o.Bin, startTimeout, p.log)
}

// Pid is the collector's process ID, to read its resource use.
func (p *Collector) Pid() int { return p.cmd.Process.Pid }

// Log is the path of the collector's log.
func (p *Collector) Log() string { return p.log }

// Alive returns the collector's exit, in its own words, if it has exited.
func (p *Collector) Alive() error {
	select {
	case <-p.exited:
		return p.exitError()
	default:
		return nil
	}
}

// exitError quotes the lines of the log that say Error, else its last lines.
func (p *Collector) exitError() error {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	var said []string
	for _, l := range lines {
		if strings.HasPrefix(l, "Error:") || strings.Contains(l, "finished with error") {
			said = append(said, l)
		}
	}
	if len(said) == 0 {
		said = lines[max(0, len(lines)-tailLines):]
	}
	return fmt.Errorf("the collector exited (%v):\n  %s\n(its log: %s)", p.err, strings.Join(said, "\n  "), p.log)
}

// Stop asks the collector to shut down (it flushes what it holds), and
// kills it after 10s.
func (p *Collector) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// Kill ends the collector at once (SIGKILL: a crash, nothing flushed) and
// waits for it to be gone.
func (p *Collector) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}
