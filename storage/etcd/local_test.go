package etcd

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestLocalReachesTheEmbeddedMemberInProcess: the local client of an
// embedded member sees what the socket's client writes and the reverse,
// refuses what the member refuses (a request over its size limit, a
// compacted revision), and its watchers (through the socket) stream events
// and progress each on streams of their own.
func TestLocalReachesTheEmbeddedMemberInProcess(t *testing.T) {
	srv := startMember(t, Options{DataDir: t.TempDir(), LogLevel: "fatal", MaxRequestBytes: 64 << 10})
	dialed, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer dialed.Close()
	local := srv.Local(dialed)
	if local.Client == dialed {
		t.Fatal("Local of an embedded member returned the dialed client")
	}
	defer local.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	first, second := local.NewWatcher(), local.NewWatcher()
	defer second.Close()
	events := first.Watch(ctx, "/k/", clientv3.WithPrefix())
	progress := second.Watch(ctx, "/other/", clientv3.WithPrefix())

	put, err := local.Client.Put(ctx, "/k/a", "1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := dialed.Get(ctx, "/k/a"); err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "1" {
		t.Fatalf("dialed client read %v, %v; want the local client's write", got, err)
	}
	if _, err := dialed.Put(ctx, "/k/b", "2"); err != nil {
		t.Fatal(err)
	}
	if got, err := local.Client.Get(ctx, "/k/b"); err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "2" {
		t.Fatalf("local client read %v, %v; want the dialed client's write", got, err)
	}
	var seen []string
	for len(seen) < 2 {
		wr := <-events
		if err := wr.Err(); err != nil {
			t.Fatal(err)
		}
		for _, ev := range wr.Events {
			seen = append(seen, string(ev.Kv.Key)+"="+string(ev.Kv.Value))
		}
	}
	if seen[0] != "/k/a=1" || seen[1] != "/k/b=2" {
		t.Errorf("watch events %v, want [/k/a=1 /k/b=2]", seen)
	}

	// One watcher's progress request is answered on its own stream, and
	// closing the other leaves it streaming.
	first.Close()
	if err := second.RequestProgress(ctx); err != nil {
		t.Fatal(err)
	}
	wr := <-progress
	if !wr.IsProgressNotify() || wr.Header.Revision < put.Header.Revision+1 {
		t.Errorf("second watcher got %+v, want a progress notification at revision >= %d", wr, put.Header.Revision+1)
	}

	if _, err := local.Client.Put(ctx, "/k/big", string(make([]byte, 65<<10))); !errors.Is(err, rpctypes.ErrRequestTooLarge) {
		t.Errorf("a put over the member's request limit: %v, want %v", err, rpctypes.ErrRequestTooLarge)
	}
	if _, err := local.Client.Compact(ctx, put.Header.Revision+1); err != nil {
		t.Fatal(err)
	}
	if _, err := local.Client.Get(ctx, "/k/a", clientv3.WithRev(put.Header.Revision)); !errors.Is(err, rpctypes.ErrCompacted) {
		t.Errorf("a read at a compacted revision: %v, want %v", err, rpctypes.ErrCompacted)
	}
}

// TestLocalOfExternalEtcdIsTheDialedClient: with etcd apart there is no
// member in the process to call.
func TestLocalOfExternalEtcdIsTheDialedClient(t *testing.T) {
	member := startMember(t, Options{DataDir: t.TempDir(), LogLevel: "fatal"})
	c, err := Options{Servers: member.Endpoints()}.Complete()
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(c)
	if err := srv.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	dialed, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer dialed.Close()
	if local := srv.Local(dialed); local.Client != dialed {
		t.Errorf("Local of external etcd: a client of its own, want the dialed one")
	}
}
