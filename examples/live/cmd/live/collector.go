package main

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

// readyLine is what the collector logs once every pipeline has started.
const readyLine = "Everything is ready"

// collector is a running otelcol-agentguard whose log goes to a file.
type collector struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
	err    error // why it exited, once exited is closed
}

// startCollector runs bin with the configuration and env added, its own
// metrics off (their default port may be held) and its log unsampled (the
// debug exporter's line for every batch is counted), and returns once it is
// ready; if it exits first, the error quotes its log.
func startCollector(bin, config, logPath string, env []string) (*collector, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	c := &collector{log: logPath, exited: make(chan struct{}),
		cmd: exec.Command(bin, "--config", config, "--set", "service::telemetry::metrics::level=none",
			"--set", "service::telemetry::logs::sampling::enabled=false")}
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stdout, c.cmd.Stderr = f, f
	if err := c.cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w (make dist builds it)", bin, err)
	}
	go func() {
		c.err = c.cmd.Wait()
		f.Close()
		close(c.exited)
	}()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err := c.alive(); err != nil {
			return nil, err
		}
		if b, _ := os.ReadFile(logPath); strings.Contains(string(b), readyLine) {
			return c, nil
		}
	}
	c.stop()
	return nil, fmt.Errorf("the collector was not ready within 60s; its log: %s", logPath)
}

// alive returns the collector's exit, with the last lines of its log, if it
// has exited.
func (c *collector) alive() error {
	select {
	case <-c.exited:
		b, _ := os.ReadFile(c.log)
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		return fmt.Errorf("the collector exited (%v):\n  %s\n(its log: %s)", c.err,
			strings.Join(lines[max(0, len(lines)-10):], "\n  "), c.log)
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

// debugSpans matches the debug exporter's line for each batch it was given
// at basic verbosity: what the traces pipeline passed on.
var debugSpans = regexp.MustCompile(`\tTraces\t.*"spans": (\d+)`)

// spansPassedOn adds up the spans the collector's debug exporter logged.
func spansPassedOn(logPath string) (int, error) {
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
		return 0, errors.New("no debug exporter line in the collector's log")
	}
	return n, nil
}

// freeAddr is a loopback address nothing listens on now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
