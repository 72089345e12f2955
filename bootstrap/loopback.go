package bootstrap

import (
	"context"
	"net"
	"net/http"
	"sync"

	"k8s.io/client-go/rest"
)

// loopback serves the API to in-process clients over in-memory connections:
// kube-apiserver's own controllers use a privileged loopback client, and
// these connections, like that client, pass no authentication (the handler
// is the API without the filter chain). Watches stream as over a socket.
type loopback struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	srv   *http.Server
}

func newLoopback(handler http.Handler) *loopback {
	l := &loopback{conns: make(chan net.Conn), done: make(chan struct{})}
	l.srv = &http.Server{Handler: handler}
	go func() { _ = l.srv.Serve(l) }()
	return l
}

// config is a client configuration that reaches the API through l.
func (l *loopback) config() *rest.Config {
	return &rest.Config{Host: "http://loopback", QPS: -1, UserAgent: "kube-apiserver",
		Dial: l.dial}
}

func (l *loopback) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
	case <-ctx.Done():
	}
	client.Close()
	server.Close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, net.ErrClosed
}

// Accept implements net.Listener.
func (l *loopback) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting; shutdown also ends the connections.
func (l *loopback) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *loopback) shutdown() {
	l.Close()
	l.srv.Close()
}

// Addr implements net.Listener.
func (l *loopback) Addr() net.Addr { return loopbackAddr{} }

type loopbackAddr struct{}

func (loopbackAddr) Network() string { return "pipe" }
func (loopbackAddr) String() string  { return "loopback" }
