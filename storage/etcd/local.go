package etcd

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc"
	"go.etcd.io/etcd/server/v3/proxy/grpcproxy/adapter"
)

// Local is how strata's own API reaches its etcd. For the embedded member
// its reads and writes (the KV service: ranges, transactions, compaction)
// are the member's gRPC service called as a function, with no socket,
// HTTP/2 framing or protobuf encoding between a request and the member in
// the same process; the service is the one its socket serves, quota,
// request-size and revision checks included. Its watches, leases and
// maintenance go through the socket (the dialed client): etcd's
// in-process watch adapter joins the two sides with unbuffered pipes, and
// a client cancelling a watch while the member delivered events to its
// stream deadlocked (TestLocalWatchesEndWhileEventsFlow). For external
// etcd, Client is the dialed client.
type Local struct {
	Client *clientv3.Client
	dialed *clientv3.Client
}

// Local returns the client of the running embedded member described
// above, or, for external etcd, dialed (a client of Client) itself.
func (s *Server) Local(dialed *clientv3.Client) Local {
	s.mu.Lock()
	e := s.etcd
	s.mu.Unlock()
	if e == nil {
		return Local{Client: dialed, dialed: dialed}
	}
	c := clientv3.NewCtxClient(context.Background(), clientv3.WithZapLogger(e.Server.Logger()))
	c.KV = clientv3.NewKVFromKVClient(adapter.KvServerToKvClient(v3rpc.NewQuotaKVServer(e.Server)), c)
	c.Watcher, c.Lease, c.Cluster, c.Maintenance, c.Auth = dialed.Watcher, dialed.Lease, dialed.Cluster, dialed.Maintenance, dialed.Auth
	return Local{Client: c, dialed: dialed}
}

// Dialed is the client over the socket (or the network) that Local was
// made from: what asks each member endpoint for its status.
func (l Local) Dialed() *clientv3.Client { return l.dialed }

// NewWatcher makes a watcher with streams of its own over the dialed
// client, as clientv3.NewWatcher does (a watch cache's progress requests
// then reach its own stream only); Client, with no connection of its own,
// cannot make one.
func (l Local) NewWatcher() clientv3.Watcher { return clientv3.NewWatcher(l.dialed) }

// Close closes Client when it is a client of its own, not the dialed one.
// Close it only with the dialed client: it shares that one's watcher and
// lessor.
func (l Local) Close() error {
	if l.Client == l.dialed {
		return nil
	}
	return l.Client.Close()
}
