package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratadev/strata/internal/freeport"
	"github.com/stratadev/strata/storage/etcd"
)

// startCluster starts three embedded members on loopback and returns their
// servers and stop functions. A free port can still be taken between
// choosing it and binding it (by another test's listener), so a start that
// finds a port in use is retried with fresh ports.
func startCluster(t *testing.T) ([]*etcd.Server, []context.CancelFunc) {
	for attempt := 1; ; attempt++ {
		servers, stops, err := tryStartCluster(t)
		if err == nil {
			return servers, stops
		}
		if !errors.Is(err, syscall.EADDRINUSE) || attempt == 5 {
			t.Fatal(err)
		}
		t.Logf("attempt %d: %v; retrying with other ports", attempt, err)
	}
}

func tryStartCluster(t *testing.T) ([]*etcd.Server, []context.CancelFunc, error) {
	const n = 3
	ports, err := freeport.Loopback(2 * n)
	if err != nil {
		t.Fatal(err)
	}
	peers, clients := ports[:n], ports[n:]
	var initial []string
	for i := range peers {
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
	stopAll := func() {
		for i, stop := range stops {
			stop()
			if servers[i] != nil {
				<-servers[i].Done()
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		stopAll()
		return nil, nil, err
	}
	t.Cleanup(stopAll)
	return servers, stops, nil
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
