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
// etcd, Local is the dialed client.
type Local struct {
	Client *clientv3.Client
	// NewWatcher makes a watcher with streams of its own, as
	// clientv3.NewWatcher does (a watch cache's progress requests then
	// reach its own stream only); nil for external etcd, where the stores'
	// default does.
	NewWatcher func() clientv3.Watcher
}

// Local returns the client of the running embedded member described
// above, or, for external etcd, dialed (a client of Client) itself. A
// caller closes Local.Client when it is not dialed, and only when it
// closes dialed too: closing it closes the watcher and lessor it shares.
func (s *Server) Local(dialed *clientv3.Client) Local {
	s.mu.Lock()
	e := s.etcd
	s.mu.Unlock()
	if e == nil {
		return Local{Client: dialed}
	}
	c := clientv3.NewCtxClient(context.Background(), clientv3.WithZapLogger(e.Server.Logger()))
	c.KV = clientv3.NewKVFromKVClient(adapter.KvServerToKvClient(v3rpc.NewQuotaKVServer(e.Server)), c)
	c.Watcher, c.Lease, c.Cluster, c.Maintenance, c.Auth = dialed.Watcher, dialed.Lease, dialed.Cluster, dialed.Maintenance, dialed.Auth
	return Local{Client: c, NewWatcher: func() clientv3.Watcher { return clientv3.NewWatcher(dialed) }}
}
