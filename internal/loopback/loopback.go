// Package loopback serves the API to the server's own controllers over
// in-memory connections, as kube-apiserver serves its loopback client:
// the requests skip the filter chain (no authentication, authorization,
// in-flight limits or request log) and carry the privileged user
// system:apiserver, a member of system:masters, so that code behind the
// chain that looks at the user (escalation checks, managedFields) sees
// the server itself. Watches stream as over a socket.
package loopback

import (
	"context"
	"net"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
)

// User is who loopback requests are made as: kube-apiserver's loopback
// identity.
var User user.Info = &user.DefaultInfo{Name: user.APIServerUser,
	Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}}

// UserAgent is the loopback client's, as kube-apiserver's: managedFields
// of its writes name the manager "kube-apiserver".
const UserAgent = "kube-apiserver"

// Loopback is a listener of in-memory connections and the HTTP server on
// it.
type Loopback struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	srv   *http.Server
}

// New serves handler (the API without the filter chain) on a new
// loopback.
func New(handler http.Handler) *Loopback {
	l := &Loopback{conns: make(chan net.Conn), done: make(chan struct{})}
	l.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), User)))
	})}
	go func() { _ = l.srv.Serve(l) }()
	return l
}

// Config is a client configuration that reaches the API through l,
// without client-side rate limits. Built-in kinds travel in protobuf, as
// kube-apiserver's loopback client and kube-controller-manager's clients
// send and accept them: the informers of the server's controllers decode
// every watch event of what they follow, and protobuf decodes several times
// faster than JSON. Custom resources, which have no protobuf form, fall
// back to JSON (the dynamic and metadata clients choose their own types).
func (l *Loopback) Config() *rest.Config {
	return &rest.Config{Host: "http://loopback", QPS: -1, UserAgent: UserAgent, Dial: l.dial,
		ContentConfig: rest.ContentConfig{
			ContentType:        runtime.ContentTypeProtobuf,
			AcceptContentTypes: runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON,
		}}
}

func (l *Loopback) dial(ctx context.Context, _, _ string) (net.Conn, error) {
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
func (l *Loopback) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting new connections (net.Listener); Shutdown also
// ends the open ones.
func (l *Loopback) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Shutdown closes l and every connection on it.
func (l *Loopback) Shutdown() {
	l.Close()
	l.srv.Close()
}

// Addr implements net.Listener.
func (l *Loopback) Addr() net.Addr { return addr{} }

type addr struct{}

func (addr) Network() string { return "pipe" }
func (addr) String() string  { return "loopback" }
