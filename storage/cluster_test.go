package storage

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratadev/strata/storage/etcd"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startCluster starts three embedded members on loopback and returns their
// servers and stop functions.
func startCluster(t *testing.T) ([]*etcd.Server, []context.CancelFunc) {
	const n = 3
	peers, clients := make([]int, n), make([]int, n)
	var initial []string
	for i := range peers {
		peers[i], clients[i] = freePort(t), freePort(t)
		initial = append(initial, fmt.Sprintf("m%d=http://127.0.0.1:%d", i, peers[i]))
	}
	servers, stops := make([]*etcd.Server, n), make([]context.CancelFunc, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range servers {
		ctx, cancel := context.WithCancel(context.Background())
		stops[i] = cancel
		wg.Add(1)
		go func() {
			defer wg.Done()
			servers[i], errs[i] = startEtcd(ctx, etcd.Options{
				DataDir: t.TempDir(), Name: fmt.Sprintf("m%d", i), PeerPort: peers[i], ClientPort: clients[i],
				InitialCluster: strings.Join(initial, ","), UnsafeNoFsync: true, LogLevel: "fatal",
			})
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for i, stop := range stops {
			stop()
			if servers[i] != nil {
				<-servers[i].Done()
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return servers, stops
}

// TestThreeMemberCluster: the store keeps serving reads and writes after one
// member of a three-member cluster stops, and loses nothing acknowledged.
func TestThreeMemberCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three etcd members")
	}
	servers, stops := startCluster(t)
	var endpoints []string
	for _, s := range servers {
		endpoints = append(endpoints, s.Endpoints()...)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	s, err := New(Config{Client: cli, Resource: schema.GroupResource{Resource: "clusterwidgets"}, Namespaced: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	acked := 0
	write := func(retry bool) {
		deadline := time.Now().Add(15 * time.Second)
		for {
			_, err := s.Create(ctx, widget("ha", fmt.Sprintf("w%d", acked), nil))
			if err == nil {
				acked++
				return
			}
			if !retry || time.Now().After(deadline) {
				t.Fatalf("write %d: %v", acked, err)
			}
			time.Sleep(50 * time.Millisecond) // waiting out a leader election
		}
	}
	for i := 0; i < 10; i++ {
		write(false)
	}
	stops[0]()
	<-servers[0].Done()
	write(true) // the first write may have to wait for a new leader
	for i := 0; i < 10; i++ {
		write(true)
	}
	l, err := s.List(ctx, "ha", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != acked {
		t.Fatalf("listed %d objects, %d writes were acknowledged", len(l.Items), acked)
	}
	for i := 0; i < acked; i++ {
		if _, err := s.Get(ctx, "ha", fmt.Sprintf("w%d", i), GetOptions{}); err != nil {
			t.Fatalf("acknowledged w%d: %v", i, err)
		}
	}
}
