// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"
)

// server is a Prometheus or Alertmanager process, its output in a file.
type server struct {
	name string
	cmd  *exec.Cmd
	log  string
}

// startServer runs bin with args, its output in dir/name.log, and waits
// until url answers 200 (its /-/ready).
func startServer(name, dir, ready, bin string, args ...string) (*server, error) {
	log := filepath.Join(dir, name+".log")
	f, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	s := &server{name: name, cmd: exec.Command(bin, args...), log: log}
	s.cmd.Stdout, s.cmd.Stderr = f, f
	if err := s.cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w (make alerting installs it from Debian)", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait(); f.Close() }()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("%s exited at start (%v); its log: %s", name, err, log)
		default:
		}
		if resp, err := http.Get(ready); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
	}
	s.stop()
	return nil, fmt.Errorf("%s not ready within 30s; its log: %s", name, log)
}

// stop ends the server it started (by its own process, SIGTERM then kill).
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _, _ = s.cmd.Process.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
	}
}

// rewriteYAML reads the example file src, lets edit change it, and writes it
// to dst: the shipped configuration is what runs, with this run's addresses
// and intervals.
func rewriteYAML(src, dst string, edit func(map[string]any)) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	edit(doc)
	out, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, out, 0o644)
}

// alertmanagerConfig is examples/alerting/alertmanager.yml with the
// webhook's URL and the test's short group_wait.
func alertmanagerConfig(src, dst, webhook string, groupWait time.Duration) error {
	return rewriteYAML(src, dst, func(doc map[string]any) {
		route := doc["route"].(map[string]any)
		route["group_wait"] = groupWait.String()
		route["group_interval"] = "1s"
		for _, r := range doc["receivers"].([]any) {
			for _, w := range r.(map[string]any)["webhook_configs"].([]any) {
				w.(map[string]any)["url"] = webhook
			}
		}
	})
}

// prometheusConfig is examples/alerting/prometheus.yml with the test's
// intervals, the rules file's absolute path, and this run's targets.
func prometheusConfig(src, dst, rules, alertmanager string, targets map[string]string, interval time.Duration) error {
	return rewriteYAML(src, dst, func(doc map[string]any) {
		doc["global"] = map[string]any{"scrape_interval": interval.String(), "evaluation_interval": interval.String()}
		doc["rule_files"] = []any{rules}
		doc["alerting"] = map[string]any{"alertmanagers": []any{map[string]any{"static_configs": []any{map[string]any{"targets": []any{alertmanager}}}}}}
		for _, sc := range doc["scrape_configs"].([]any) {
			job := sc.(map[string]any)
			job["static_configs"] = []any{map[string]any{"targets": []any{targets[job["job_name"].(string)]}}}
		}
	})
}
