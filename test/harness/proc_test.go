// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestProcessCPUAndRSS(t *testing.T) {
	before, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the kernel has counted a few ticks of CPU time.
	for x, end := 0, time.Now().Add(100*time.Millisecond); time.Now().Before(end); x++ {
		_ = x * x
	}
	after, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("CPU time %v then %v after spinning 100 ms: want it to grow", before, after)
	}
	rss, err := ProcessRSS(os.Getpid())
	if err != nil || rss < 1<<20 {
		t.Errorf("ProcessRSS = %d, %v: want a Go test process's megabytes", rss, err)
	}
	if _, err := ProcessCPU(-1); err == nil {
		t.Error("ProcessCPU of no process gave no error")
	}
}

func TestLoadAvg(t *testing.T) {
	if f := strings.Fields(LoadAvg()); len(f) != 3 {
		t.Errorf("LoadAvg() = %q: want three figures", LoadAvg())
	}
}
