package freeport

import (
	"net"
	"strconv"
	"testing"
)

// TestLoopback: the ports are distinct, below the ephemeral range, and free
// to bind once Loopback returns.
func TestLoopback(t *testing.T) {
	ports, err := Loopback(6)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Fatalf("port %d given twice: %v", p, ports)
		}
		seen[p] = true
		if p < lowest || p >= ephemeralStart() {
			t.Fatalf("port %d outside %d-%d", p, lowest, ephemeralStart()-1)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d not free after Loopback: %v", p, err)
		}
		l.Close()
	}
}
