package storage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratadev/strata/storage/etcd"
)

// TestSpaceQuotaRecovery: once etcd's database reaches its quota, writes
// get kube-apiserver's answer (500, etcd's message), the guard's check
// fails naming the alarm, and Recover compacts, defragments and disarms,
// after which writes work and the compaction is recorded for the stores.
func TestSpaceQuotaRecovery(t *testing.T) {
	ctx := context.Background()
	cli := smallQuotaEtcd(t)
	s := newTestStore(t, func(c *Config) { c.Client = cli })
	g := NewSpaceGuard(cli, nil)
	if err := g.Check(ctx); err != nil {
		t.Fatalf("check before the quota is reached: %v", err)
	}
	fillToQuota(t, cli)
	_, err := s.Create(ctx, widget("default", "after-full", nil))
	want := metav1.Status{Status: metav1.StatusFailure, Code: 500, Message: "etcdserver: mvcc: database space exceeded"}
	var st interface{ Status() metav1.Status }
	if !errors.Is(err, ErrNoSpace) || !errors.As(err, &st) || !equality.Semantic.DeepEqual(st.Status(), want) {
		t.Fatalf("create when full: %v, want %+v", err, want)
	}
	// The check reads the member's status; AlarmList names the same member.
	alarms, err := cli.AlarmList(ctx)
	if err != nil || len(alarms.Alarms) != 1 {
		t.Fatalf("alarms when full: %v %v", alarms, err)
	}
	member := fmt.Sprintf("%x", alarms.Alarms[0].MemberID)
	if err := g.Check(ctx); err == nil || !strings.HasPrefix(err.Error(), "etcd: database space exceeded (NOSPACE alarm on member "+member+"): ") {
		t.Fatalf("check when full: %v, want the alarm on member %s", err, member)
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

// TestSpaceGuardRun: the guard's loop notices the alarm and recovers by
// itself.
func TestSpaceGuardRun(t *testing.T) {
	cli := smallQuotaEtcd(t)
	g := NewSpaceGuard(cli, nil)
	fillToQuota(t, cli)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go g.Run(ctx, 10*time.Millisecond)
	eventually(t, "the guard to disarm the alarm", func() bool { return g.Check(ctx) == nil })
	if _, err := cli.Put(ctx, "/after", "v"); err != nil {
		t.Fatalf("put after the guard recovered: %v", err)
	}
}

// TestSpaceGuardWake: a write refused for space wakes the guard, which
// recovers at once rather than at its next interval (an hour here), so
// the client's next write succeeds.
func TestSpaceGuardWake(t *testing.T) {
	cli := smallQuotaEtcd(t)
	g := NewSpaceGuard(cli, nil)
	woken := make(chan struct{}, 1)
	st := newTestStore(t, func(c *Config) {
		c.Client = cli
		c.OnNoSpace = func() {
			g.Wake()
			select {
			case woken <- struct{}{}:
			default:
			}
		}
	})
	fillToQuota(t, cli)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go g.Run(ctx, time.Hour)
	if _, err := st.Create(ctx, widget("ns", "refused", nil)); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("create at the quota: %v, want ErrNoSpace", err)
	}
	select {
	case <-woken:
	default:
		t.Fatal("the refused create did not call OnNoSpace")
	}
	eventually(t, "the woken guard to disarm the alarm", func() bool { return g.Check(ctx) == nil })
	mustCreate(t, st, widget("ns", "after", nil))
}

// smallQuotaEtcd starts an etcd member with a 4 MiB space quota for the
// test and returns a client of it.
func smallQuotaEtcd(t *testing.T) *clientv3.Client {
	t.Helper()
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
	t.Cleanup(func() { cli.Close() })
	return cli
}

// fillToQuota writes until etcd refuses for lack of space.
func fillToQuota(t *testing.T, cli *clientv3.Client) {
	t.Helper()
	fill := strings.Repeat("x", 512<<10)
	for i := 0; i < 100; i++ {
		_, err := cli.Put(context.Background(), "/fill", fill)
		if isNoSpace(err) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("100 puts of 512 KiB did not reach a 4 MiB quota")
}

// TestNoSpaceMember reads the alarms etcd lists among a member's status
// errors.
func TestNoSpaceMember(t *testing.T) {
	for _, tt := range []struct {
		in, id string
		ok     bool
	}{
		{"memberID:10276657743932975437 alarm:NOSPACE ", "8e9e05c52164694d", true},
		{"memberID:1 alarm:NOSPACE", "1", true},
		{"memberID:10276657743932975437 alarm:CORRUPT ", "", false},
		{"etcdserver: no leader", "", false},
		{"memberID:x alarm:NOSPACE", "", false},
		{"member:1 alarm:NOSPACE", "", false},
		{"", "", false},
	} {
		if id, ok := noSpaceMember(tt.in); id != tt.id || ok != tt.ok {
			t.Errorf("noSpaceMember(%q) = %q, %v; want %q, %v", tt.in, id, ok, tt.id, tt.ok)
		}
	}
}
