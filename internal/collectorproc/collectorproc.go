// Package collectorproc runs a built collector (otelcol-agentguard, or the
// router of examples/scaleout) as a process on loopback, for the demo, the
// live harness and the scale-out test: its log goes to a file, it is ready
// when it says so, and an exit is reported at once with the collector's own
// words.
package collectorproc

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
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

// Options say what to run.
type Options struct {
	Bin     string   // the collector binary
	Configs []string // --config, merged in order
	Sets    []string // --set, after the configurations
	Env     []string // added to this process's environment
	Log     string   // where its stdout and stderr go; a temporary file when empty
}

// Process is a running collector.
type Process struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
	err    error // why it exited, once exited is closed
}

// Start runs the collector and returns once it is ready; if it exits first,
// the error is the collector's own.
func Start(o Options) (*Process, error) {
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
	p := &Process{cmd: exec.Command(o.Bin, args...), log: f.Name(), exited: make(chan struct{})}
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
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Log is the path of the collector's log.
func (p *Process) Log() string { return p.log }

// Alive returns the collector's exit, in its own words, if it has exited.
func (p *Process) Alive() error {
	select {
	case <-p.exited:
		return p.exitError()
	default:
		return nil
	}
}

// exitError quotes the lines of the log that say Error, else its last lines.
func (p *Process) exitError() error {
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
func (p *Process) Stop() {
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
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// FreeAddrs are n loopback addresses free at once (their listeners are held
// until all are found, so the n differ).
func FreeAddrs(n int) ([]string, error) {
	out := make([]string, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}

// TelemetryConfig is a configuration that serves the collector's own metrics
// on addr (host:port), named as by default (no scope info, unit or type
// suffix): merged after the others, it replaces the default reader on :8888,
// which something else may hold (the collector would not start).
func TelemetryConfig(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf(`service:
  telemetry:
    metrics:
      readers:
        - pull:
            exporter:
              prometheus:
                host: %q
                port: %s
                without_scope_info: true
                without_units: true
                without_type_suffix: true
`, host, port)
}

// WriteTelemetryConfig writes TelemetryConfig(addr) to a temporary file and
// returns its path.
func WriteTelemetryConfig(addr string) (string, error) {
	f, err := os.CreateTemp("", "otelcol-telemetry-*.yaml")
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(TelemetryConfig(addr))
	return f.Name(), errors.Join(err, f.Close())
}

// debugSpans matches the debug exporter's line for each batch it was given
// at basic verbosity: what a traces pipeline passed on. (Its log must not be
// sampled: --set service::telemetry::logs::sampling::enabled=false.)
var debugSpans = regexp.MustCompile(`\tTraces\t.*"spans": (\d+)`)

// SpansPassedOn adds up the spans the collector's debug exporter logged.
func SpansPassedOn(logPath string) (int, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, batches := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		if m := debugSpans.FindStringSubmatch(sc.Text()); m != nil {
			k, _ := strconv.Atoi(m[1])
			n += k
			batches++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if batches == 0 {
		return 0, fmt.Errorf("no debug exporter line in the collector's log %s", logPath)
	}
	return n, nil
}
