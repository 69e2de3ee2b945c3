// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentguard/agentguard/test/harness"
)

// profilePath is where run's profile of round r goes, "" without -profile.
func profilePath(o options, run cpuRun, r int) string {
	if o.profile == "" {
		return ""
	}
	name := strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(run.key)
	return filepath.Join(o.profile, fmt.Sprintf("%s-round%d.pb.gz", name, r+1))
}

// startProfiled is start, with the collector's pprof extension on when
// profiling (its address; "" otherwise).
func startProfiled(o options, s setup, sk *sink, log string, profiling bool) (*harness.Collector, string, string, error) {
	pprofAddr := ""
	if profiling {
		var err error
		if s, pprofAddr, err = withPprof(s); err != nil {
			return nil, "", "", err
		}
	}
	col, otlp, err := start(o, s, sk, log)
	return col, otlp, pprofAddr, err
}

// withPprof is s with the collector's pprof extension on a free port.
func withPprof(s setup) (setup, string, error) {
	addrs, err := harness.FreeAddrs(1)
	if err != nil {
		return s, "", err
	}
	s.configs = append(append([]string(nil), s.configs...), fmt.Sprintf(`
extensions:
  pprof:
    endpoint: %s
service:
  extensions: [pprof]
`, addrs[0]))
	return s, addrs[0], nil
}

// startProfile fetches a CPU profile from addr into path, in the
// background; the channel closes when it is written (or failed, said on
// stderr: a profile is an aid, not a measure).
func startProfile(addr, path string, seconds int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := fetchPprof(addr, fmt.Sprintf("profile?seconds=%d", seconds), path); err != nil {
			progress("profile %s: %v", path, err)
		}
	}()
	return done
}

// fetchPprof writes the pprof extension's /debug/pprof/WHAT to path.
func fetchPprof(addr, what, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	c := http.Client{Timeout: time.Hour} // a CPU profile takes as long as it was asked to (-profile-seconds)
	resp, err := c.Get(fmt.Sprintf("http://%s/debug/pprof/%s", addr, what))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
