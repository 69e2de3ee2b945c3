package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// readyLine is what the collector logs once every pipeline has started.
const readyLine = "Everything is ready"

// startTimeout bounds the wait for a collector that neither starts nor exits.
const startTimeout = 60 * time.Second

// collector is a running otelcol-agentguard: its log goes to a file, and its
// exit is noticed at once, with what it said last.
type collector struct {
	cmd    *exec.Cmd
	log    *os.File
	ready  chan struct{}
	exited chan struct{}
	err    error // why it exited, once exited is closed

	mu   sync.Mutex
	tail []string // its last lines, for the error
}

// tailLines is how many of the collector's last lines an error quotes at most.
const tailLines = 15

// startCollector runs bin with the configurations merged in order and env
// added, and returns once it is ready; if it exits first, the error is the
// collector's own.
func startCollector(bin string, configs, env []string) (*collector, error) {
	var args []string
	for _, c := range configs {
		args = append(args, "--config", c)
	}
	log, err := os.CreateTemp("", "otelcol-agentguard-*.log")
	if err != nil {
		return nil, err
	}
	c := &collector{cmd: exec.Command(bin, args...), log: log, ready: make(chan struct{}), exited: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stdout = log
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w (make dist builds it)", bin, err)
	}
	go c.watch(stderr)
	select {
	case <-c.ready:
		return c, nil
	case <-c.exited:
		return nil, c.exitError()
	case <-time.After(startTimeout):
		c.stop()
		return nil, fmt.Errorf("the collector was not ready within %v; its log: %s", startTimeout, log.Name())
	}
}

// watch copies the collector's stderr (its log) to the log file, keeps the
// last lines, notices readiness, and records the exit.
func (c *collector) watch(stderr io.Reader) {
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	isReady := false
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(c.log, line)
		c.mu.Lock()
		c.tail = append(c.tail, line)
		if len(c.tail) > tailLines {
			c.tail = c.tail[1:]
		}
		c.mu.Unlock()
		if !isReady && strings.Contains(line, readyLine) {
			isReady = true
			close(c.ready)
		}
	}
	if sc.Err() != nil { // a line past the buffer: keep the rest of the log, unread
		_, _ = io.Copy(c.log, stderr)
	}
	c.err = c.cmd.Wait()
	c.log.Close()
	close(c.exited)
}

// exitError is the collector's exit with its own words: the lines of its
// log that say Error, else its last lines.
func (c *collector) exitError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var said []string
	for _, l := range c.tail {
		if strings.HasPrefix(l, "Error:") || strings.Contains(l, "finished with error") {
			said = append(said, l)
		}
	}
	if len(said) == 0 {
		said = c.tail
	}
	return fmt.Errorf("the collector exited (%v):\n  %s\n(its log: %s)", c.err, strings.Join(said, "\n  "), c.log.Name())
}

// alive returns the collector's error if it has exited.
func (c *collector) alive() error {
	select {
	case <-c.exited:
		return c.exitError()
	default:
		return nil
	}
}

// stop asks the collector to shut down, and kills it after 10s.
func (c *collector) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

// freeAddrs are n loopback addresses free at once (their listeners are held
// until all are found, so the n differ).
func freeAddrs(n int) ([]string, error) {
	var out []string
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

// telemetryConfig serves the collector's own metrics on addr instead of the
// default localhost:8888, which something else may hold (the collector would
// not start), named as by default.
func telemetryConfig(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "otelcol-agentguard-telemetry-*.yaml")
	if err != nil {
		return "", err
	}
	_, err = fmt.Fprintf(f, `service:
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
	return f.Name(), errors.Join(err, f.Close())
}
