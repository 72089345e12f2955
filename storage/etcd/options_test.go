package etcd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOptionsComplete(t *testing.T) {
	bad := map[string]Options{
		"no data dir":          {},
		"bad server url":       {Servers: []string{"127.0.0.1:2379"}},
		"cert without key":     {Servers: []string{"https://127.0.0.1:2379"}, CertFile: "c.pem"},
		"port out of range":    {DataDir: "d", ClientPort: 70000},
		"negative peer port":   {DataDir: "d", PeerPort: -1},
		"unsupported protocol": {Servers: []string{"ftp://127.0.0.1:2379"}},
		"relative socket":      {Servers: []string{"unix:etcd.sock"}},
		"negative quota":       {DataDir: "d", QuotaBackendBytes: -1},
	}
	for name, o := range bad {
		if _, err := o.Complete(); err == nil || !strings.HasPrefix(err.Error(), "etcd: options:") {
			t.Errorf("%s: got %v, want an etcd: options: error", name, err)
		}
	}
	c, err := Options{Servers: []string{"https://10.0.0.1:2379", "https://10.0.0.2:2379"}}.Complete()
	if err != nil || c.Embedded() || len(c.Endpoints()) != 2 {
		t.Fatalf("external: %v %+v", err, c)
	}
	if _, err := (Options{Servers: []string{"unix:///run/strata/etcd/etcd.sock"}}).Complete(); err != nil {
		t.Errorf("external unix socket: %v", err)
	}
	c, err = Options{DataDir: "rel"}.Complete()
	if err != nil || !c.Embedded() || !filepath.IsAbs(c.opts.DataDir) ||
		c.Endpoints()[0] != "unix://"+filepath.Join(c.opts.DataDir, "etcd.sock") ||
		c.PeerURL() != "unix://"+filepath.Join(c.opts.DataDir, "peer.sock") || c.QuotaBackendBytes() != 2<<30 {
		t.Fatalf("embedded: %v %+v", err, c)
	}
	c, err = Options{DataDir: "rel", ClientPort: 0, PeerPort: 1}.Complete()
	if err != nil || !strings.HasPrefix(c.Endpoints()[0], "http://127.0.0.1:") || c.PeerURL() != "http://127.0.0.1:1" {
		t.Fatalf("embedded on TCP ports: %v %+v", err, c)
	}
}

// TestReadinessTimeoutNamesDirAndTimeout: a member that is not ready in
// time fails with the data directory and the timeout in the error.
func TestReadinessTimeoutNamesDirAndTimeout(t *testing.T) {
	dir := t.TempDir()
	c, err := Options{DataDir: dir, StartTimeout: time.Nanosecond, LogLevel: "fatal"}.Complete()
	if err != nil {
		t.Fatal(err)
	}
	err = NewServer(c).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "1ns") {
		t.Fatalf("got %v, want an error naming %s and 1ns", err, dir)
	}
}

// TestStartFailureNamesDir: a data directory that cannot be used is
// reported with its path.
func TestStartFailureNamesDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Options{DataDir: file, LogLevel: "fatal"}.Complete()
	if err != nil {
		t.Fatal(err)
	}
	err = NewServer(c).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("got %v, want an error naming %s", err, file)
	}
}
