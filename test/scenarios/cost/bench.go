// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
)

// benchLine matches a result line of ThroughputParallel's sub-benchmarks:
// the name, -2 at 2 cores (nothing at 1), and ns/op.
var benchLine = regexp.MustCompile(`(?m)^BenchmarkThroughputParallel/(\w+)(-2)?\s+\d+\s+([\d.]+) ns/op`)

// parallelScaling is row 6: temporalcheck's throughput benchmark with
// concurrent senders at 1 core and 2, the time an op at 1 over that at 2.
func parallelScaling(options, *sink) (result, error) {
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "ThroughputParallel", "-benchmem", "-cpu", "1,2", "./processor/temporalcheck")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	progress("go test -bench ThroughputParallel -cpu 1,2 ./processor/temporalcheck")
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("%v: %w\n%s", cmd.Args, err, out.Bytes())
	}
	nsOp, err := parseBench(out.Bytes())
	if err != nil {
		return result{}, err
	}
	tc, pass := nsOp["temporalcheck"], nsOp["passthrough"]
	scaling := tc[0] / tc[1]
	return result{
		row:     6,
		measure: "temporalcheck ThroughputParallel, 2 cores ÷ 1",
		figure: fmt.Sprintf("%.2f× (%.0f ns/op at 1 core, %.0f at 2; the pass-through %.2f×)",
			scaling, tc[0], tc[1], pass[0]/pass[1]),
		goal: "≥ 1.6× (on a quiet machine)",
		met:  scaling >= 1.6,
	}, nil
}

// parseBench returns each sub-benchmark's ns/op at 1 core and at 2.
func parseBench(out []byte) (map[string][2]float64, error) {
	nsOp := map[string][2]float64{}
	seen := map[string]int{}
	for _, m := range benchLine.FindAllSubmatch(out, -1) {
		v, err := strconv.ParseFloat(string(m[3]), 64)
		if err != nil {
			return nil, err
		}
		name, at := string(m[1]), 0
		if len(m[2]) > 0 {
			at = 1
		}
		r := nsOp[name]
		r[at] = v
		nsOp[name] = r
		seen[name] |= 1 << at
	}
	for _, name := range []string{"temporalcheck", "passthrough"} {
		if seen[name] != 3 {
			return nil, fmt.Errorf("no ns/op of ThroughputParallel/%s at both 1 and 2 cores in:\n%s", name, out)
		}
	}
	return nsOp, nil
}
