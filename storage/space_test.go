package storage

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratadev/strata/storage/etcd"
)

// TestSpaceQuotaRecovery: once etcd's database reaches its quota, writes
// get kube-apiserver's answer (500, etcd's message), the guard's check
// fails naming the alarm, and Recover compacts, defragments and disarms,
// after which writes work and the compaction is recorded for the stores.
func TestSpaceQuotaRecovery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := startEtcd(ctx, etcd.Options{DataDir: filepath.Join(t.TempDir(), "etcd"), UnsafeNoFsync: true,
		LogLevel: "fatal", QuotaBackendBytes: 4 << 20})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-srv.Done() })
	cli, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	s := newTestStore(t, func(c *Config) { c.Client = cli })
	g := NewSpaceGuard(cli, nil)
	if err := g.Check(ctx); err != nil {
		t.Fatalf("check before the quota is reached: %v", err)
	}
	fill := strings.Repeat("x", 512<<10)
	var filled bool
	for i := 0; i < 100 && !filled; i++ {
		_, err := cli.Put(ctx, "/fill", fill)
		filled = isNoSpace(err)
		if err != nil && !filled {
			t.Fatal(err)
		}
	}
	if !filled {
		t.Fatal("100 puts of 512 KiB did not reach a 4 MiB quota")
	}
	_, err = s.Create(ctx, widget("default", "after-full", nil))
	want := metav1.Status{Status: metav1.StatusFailure, Code: 500, Message: "etcdserver: mvcc: database space exceeded"}
	var st interface{ Status() metav1.Status }
	if !errors.Is(err, ErrNoSpace) || !errors.As(err, &st) || !equality.Semantic.DeepEqual(st.Status(), want) {
		t.Fatalf("create when full: %v, want %+v", err, want)
	}
	if err := g.Check(ctx); err == nil || !strings.HasPrefix(err.Error(), "etcd: database space exceeded (NOSPACE alarm on member ") {
		t.Fatalf("check when full: %v", err)
	}
	r, err := g.Recover(ctx)
	if err != nil || !r.Disarmed || r.After >= r.Quota || r.Quota != 4<<20 || r.After >= r.Before {
		t.Fatalf("recover: %+v %v", r, err)
	}
	if err := g.Check(ctx); err != nil {
		t.Fatalf("check after recovery: %v", err)
	}
	if _, err := s.Create(ctx, widget("default", "after-recovery", nil)); err != nil {
		t.Fatalf("create after recovery: %v", err)
	}
	resp, err := cli.Get(ctx, compactRevKey)
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != strconv.FormatInt(r.Revision, 10) {
		t.Fatalf("%s after recovery: %v %v, want %d", compactRevKey, resp, err, r.Revision)
	}
	if r, err := g.Recover(ctx); err != nil || !r.Disarmed {
		t.Fatalf("a second recovery: %+v %v", r, err)
	}
}
