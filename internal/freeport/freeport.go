// Package freeport finds loopback TCP ports for tests that must know a port
// before a server binds it (an etcd cluster's initial-cluster list, a
// restart on the same port).
//
// A port from net.Listen(":0") is in the kernel's ephemeral range, where any
// process's next outgoing connection may take it between the test choosing
// it and the server binding it; on a busy CI machine that happens. So the
// ports come from below the ephemeral range, where only listeners that
// choose their port explicitly can collide.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// lowest is the first port considered: above the well-known and the commonly
// configured registered ports.
const lowest = 20000

// rangeFile holds the kernel's ephemeral range ("32768\t60999" by default).
const rangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// Loopback returns n distinct ports on 127.0.0.1 that nothing listens on.
// Each was bound a moment ago; the listeners stay open until all are found.
func Loopback(n int) ([]int, error) {
	limit := ephemeralStart()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries == 100*n {
			return nil, fmt.Errorf("freeport: no %d free loopback ports in %d-%d after %d tries", n, lowest, limit-1, tries)
		}
		port := lowest + rand.IntN(limit-lowest)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // in use, or taken by a listener of our own
		}
		defer l.Close()
		ports = append(ports, port)
	}
	return ports, nil
}

// ephemeralStart is the first port of the kernel's ephemeral range, or 32768
// (Linux's default) when it cannot be read or leaves too little room below.
func ephemeralStart() int {
	b, err := os.ReadFile(rangeFile)
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 32768
	}
	start, err := strconv.Atoi(fields[0])
	if err != nil || start < lowest+1000 {
		return 32768
	}
	return start
}
