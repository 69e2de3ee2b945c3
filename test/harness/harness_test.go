// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"strings"
	"testing"
)

func TestFreeAddrsDiffer(t *testing.T) {
	addrs, err := FreeAddrs(5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] || !strings.HasPrefix(a, "127.0.0.1:") {
			t.Errorf("FreeAddrs(5) = %v: want 5 different loopback addresses", addrs)
		}
		seen[a] = true
	}
}
