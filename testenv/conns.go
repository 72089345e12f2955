package testenv

import (
	"context"
	"net"
	"sync"
)

// conns dials the clients' connections to a test's server and closes them
// all at its teardown. The server's graceful shutdown waits for its open
// connections, and an idle HTTP/2 connection a client keeps (every
// client-go client does) closes only a second after the server's GOAWAY;
// closed by the test's side first, the server stops at once. No client of
// the test outlives its server anyway.
type conns struct {
	dialer net.Dialer
	mu     sync.Mutex
	open   map[net.Conn]struct{}
	closed bool
}

func newConns() *conns { return &conns{open: map[net.Conn]struct{}{}} }

// dial is a rest.Config's Dial.
func (c *conns) dial(ctx context.Context, network, address string) (net.Conn, error) {
	conn, err := c.dialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		conn.Close()
		return nil, net.ErrClosed
	}
	tracked := &trackedConn{Conn: conn, owner: c}
	c.open[tracked] = struct{}{}
	return tracked, nil
}

// closeAll closes every connection and refuses new ones.
func (c *conns) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for conn := range c.open {
		conn.(*trackedConn).Conn.Close()
	}
	clear(c.open)
}

// trackedConn leaves its owner's set when closed.
type trackedConn struct {
	net.Conn
	owner *conns
}

func (t *trackedConn) Close() error {
	t.owner.mu.Lock()
	delete(t.owner.open, t)
	t.owner.mu.Unlock()
	return t.Conn.Close()
}
