package etcd

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestLocalWatchesEndWhileEventsFlow: many watches on the local client's
// watcher, as the stores' compaction followers hold, all end when their
// contexts do while the member is delivering events to them. Over etcd's
// in-process watch adapter this deadlocked: the client's stream loop
// blocked sending a cancellation into an unbuffered pipe while the member
// blocked delivering an event to it (a server's shutdown hung in CI).
func TestLocalWatchesEndWhileEventsFlow(t *testing.T) {
	srv := startMember(t, Options{DataDir: t.TempDir(), LogLevel: "fatal"})
	dialed, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer dialed.Close()
	local := srv.Local(dialed)
	defer local.Close()
	const watches = 64
	writing, stopWriting := context.WithCancel(context.Background())
	var writer sync.WaitGroup
	writer.Go(func() {
		for i := 0; writing.Err() == nil; i++ {
			_, _ = local.Client.Put(writing, "/w/key", fmt.Sprint(i))
		}
	})
	defer func() { stopWriting(); writer.Wait() }()
	for round := range 5 {
		chans := make([]clientv3.WatchChan, watches)
		cancels := make([]context.CancelFunc, watches)
		for i := range chans {
			ctx, cancel := context.WithCancel(context.Background())
			chans[i], cancels[i] = local.Client.Watch(ctx, "/w/key"), cancel
		}
		time.Sleep(50 * time.Millisecond) // events flow to every watch
		ended := make(chan struct{})
		go func() {
			for i, ch := range chans {
				cancels[i]()
				for range ch {
				}
			}
			close(ended)
		}()
		select {
		case <-ended:
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: the watches did not end within 20 s of their cancellation", round)
		}
	}
}
