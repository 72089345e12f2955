package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// TestFailedStartStopsWhatStarted: a start that fails late (its port is
// taken, after etcd, the stores and the informers have started) stops
// what it started, so that a second start on the same data directory,
// whose embedded etcd the first held locked, succeeds and stops cleanly.
func TestFailedStartStopsWhatStarted(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	o := NewOptions()
	o.DataDir, o.BindAddress = t.TempDir(), "127.0.0.1"
	o.SecurePort = taken.Addr().(*net.TCPAddr).Port
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if r, err := Start(ctx, o); err == nil {
		cancel()
		r.Wait()
		t.Fatal("Start succeeded on a port in use")
	} else if !strings.Contains(err.Error(), "listening on") {
		t.Fatalf("Start: %v, want the listener's error", err)
	}
	o.SecurePort = 0
	serveCtx, stop := context.WithCancel(ctx)
	r, err := Start(serveCtx, o)
	if err != nil {
		stop()
		t.Fatalf("a second start on the same data directory: %v", err)
	}
	stop()
	if err := r.Wait(); err != nil {
		t.Errorf("the second server stopped: %v", err)
	}
}
