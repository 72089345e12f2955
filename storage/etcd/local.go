package etcd

import (
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc"
	"go.etcd.io/etcd/server/v3/proxy/grpcproxy/adapter"
)

// Local is how strata's own API reaches its etcd. For the embedded member
// it is etcd's v3client: the member's gRPC services called as functions,
// with no socket, HTTP/2 framing or protobuf encoding between a request
// and the member in the same process. The services are the ones its
// socket serves (quota, request size and revision checks included); only
// gRPC's own interceptors are skipped. For external etcd it is the dialed
// client.
type Local struct {
	Client *clientv3.Client
	// NewWatcher makes a watcher with streams of its own, as
	// clientv3.NewWatcher does for a dialed client (a watch cache's
	// progress requests then reach its own stream only); nil for external
	// etcd, where the stores' default (clientv3.NewWatcher) does.
	NewWatcher func() clientv3.Watcher
}

// Local returns the running embedded member's in-process client, or, for
// external etcd, dialed (a client of Client) itself. A caller closes
// Local.Client when it is not dialed.
func (s *Server) Local(dialed *clientv3.Client) Local {
	s.mu.Lock()
	e := s.etcd
	s.mu.Unlock()
	if e == nil {
		return Local{Client: dialed}
	}
	c := v3client.New(e.Server)
	return Local{Client: c, NewWatcher: func() clientv3.Watcher {
		return clientv3.NewWatchFromWatchClient(adapter.WatchServerToWatchClient(v3rpc.NewWatchServer(e.Server)), c)
	}}
}
