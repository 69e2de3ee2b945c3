// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times
// (100 on every Linux the project runs on; Go has no sysconf to ask).
const clockTicks = 100

// ProcessCPU is a process's user plus system CPU time so far, from
// /proc/PID/stat: what a collector spent, whatever it was doing, to set
// beside another collector fed the same spans.
func ProcessCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which may hold spaces and
	// parentheses: the last ')' ends it.
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 || end+2 > len(raw) {
		return 0, fmt.Errorf("/proc/%d/stat: no command name in %q", pid, raw)
	}
	fields := strings.Fields(string(raw[end+2:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command name", pid, len(fields))
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// ProcessRSS is a process's resident set (VmRSS of /proc/PID/status) in
// bytes: what the machine gives it, heap headroom and the runtime's own
// included, unlike a heap profile.
func ProcessRSS(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(raw)) {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("/proc/%d/status: VmRSS %q", pid, strings.TrimSpace(rest))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		return kb * 1024, err
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

// LoadAvg is the first three fields of /proc/loadavg, or "?": measurements
// on a shared machine are stated with the load they were taken at.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
