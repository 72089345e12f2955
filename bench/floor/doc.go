// Package floor is the floor server: what any API server in front of etcd
// pays for a request, whatever it does with the object. That is
// client-go's request and response, and HTTP/2 over TLS on loopback — and,
// for a create, the same etcd put.
//
// The do-nothing handler reads a POST's body without decoding it, puts the
// bytes strata stores for a ConfigMap under a new key and answers them
// with 201; a GET answers those bytes with 200. The other floors add only
// what a server of their kind cannot skip: a shared revision read for a
// consistent GET or list (read.go), a list encoded once (list.go),
// upstream's field manager, strategy and validation for writes and applies
// (write.go, apply.go, validate.go), and one encoded event per watch
// (watch.go).
//
// Measured beside strata's cells, floor ÷ put is the highest create ÷ put
// any server could reach on this machine with this client, and the floor's
// CPU per request (it runs as a child process, as strata does) is the
// least any server spends on one: no server's CPU per request can fall
// below it. bench/README.md lists the floors and the cells they bound.
package floor
