package etcd

import (
	"context"
	"net"
	"strconv"
	"testing"
)

// TestRunRetriesTakenPorts: when a port the launcher chose is taken before
// etcd binds it, Run chooses new ports instead of failing.
func TestRunRetriesTakenPorts(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg, err := Options{DataDir: t.TempDir(), LogLevel: "fatal"}.Complete()
	if err != nil {
		t.Fatal(err)
	}
	cfg.clientURL = loopbackURL(taken.Addr().(*net.TCPAddr).Port) // another process got there first
	ctx, cancel := context.WithCancel(context.Background())
	srv := NewServer(cfg)
	if err := srv.Run(ctx); err != nil {
		t.Fatalf("Run with a taken port: %v", err)
	}
	cancel()
	<-srv.Done()
	if cfg.clientURL.Port() == strconv.Itoa(taken.Addr().(*net.TCPAddr).Port) {
		t.Error("the taken port was kept")
	}
}

func TestFreePortsDiffer(t *testing.T) {
	for i := 0; i < 50; i++ {
		ports, err := freePorts(0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if ports[0] == ports[1] {
			t.Fatalf("freePorts gave one port twice: %v", ports)
		}
	}
}
