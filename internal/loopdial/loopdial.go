// Package loopdial lets tests call a webhook through a Service's
// EndpointSlice while every server listens on loopback only. An
// EndpointSlice may not name a loopback address (kube's
// ValidateEndpointIP), so a test names EndpointIP, an address of TEST-NET-1
// (RFC 5737) that routes nowhere, and the server under test dials it on
// 127.0.0.1 through Dial.
package loopdial

import (
	"context"
	"net"
)

// EndpointIP is the address tests put in EndpointSlices.
const EndpointIP = "192.0.2.10"

// Dial dials addr, EndpointIP standing for 127.0.0.1.
func Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if host == EndpointIP {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}
