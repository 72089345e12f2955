package storage

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stratadev/strata/storage/etcd"
)

// testClient reaches the embedded etcd that TestMain starts once for the
// package, on random loopback ports in a temporary directory.
var testClient *clientv3.Client

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		os.Exit(crashChild(dir))
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "strata-storage-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := startEtcd(ctx, etcd.Options{DataDir: dir, UnsafeNoFsync: true, LogLevel: "fatal"})
	if err != nil {
		cancel()
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { cancel(); <-srv.Done() }()
	testClient, err = srv.Client()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer testClient.Close()
	return m.Run()
}

func startEtcd(ctx context.Context, o etcd.Options) (*etcd.Server, error) {
	cfg, err := o.Complete()
	if err != nil {
		return nil, err
	}
	srv := etcd.NewServer(cfg)
	return srv, srv.Run(ctx)
}

var storeSeq atomic.Int64

// newTestStore starts a store of a resource type no other test uses.
func newTestStore(t testing.TB, tweak ...func(*Config)) *Store {
	t.Helper()
	name := strings.ToLower(regexp.MustCompile(`[^a-zA-Z0-9]+`).ReplaceAllString(t.Name(), "-"))
	cfg := Config{
		Client:           testClient,
		Resource:         schema.GroupResource{Group: "example.com", Resource: fmt.Sprintf("%s-%d", name, storeSeq.Add(1))},
		Kind:             schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
		Namespaced:       true,
		TooLargeRVWait:   500 * time.Millisecond,
		ProgressInterval: 100 * time.Millisecond,
	}
	for _, f := range tweak {
		f(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func widget(ns, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"spec": map[string]any{"size": int64(1)},
	}}
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetUID(types.UID("uid-" + ns + "-" + name))
	if labels != nil {
		u.SetLabels(labels)
	}
	return u
}

func mustCreate(t testing.TB, s *Store, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := s.Create(context.Background(), obj)
	if err != nil {
		t.Fatalf("create %s/%s: %v", obj.GetNamespace(), obj.GetName(), err)
	}
	return out
}

// setSize changes spec.size of an existing object.
func setSize(t testing.TB, s *Store, ns, name string, size int64) *unstructured.Unstructured {
	t.Helper()
	out, err := s.GuaranteedUpdate(context.Background(), ns, name, nil, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return cur, unstructured.SetNestedField(cur.Object, size, "spec", "size")
	})
	if err != nil {
		t.Fatalf("update %s/%s: %v", ns, name, err)
	}
	return out
}

// wantStatus checks that err is a store error with the sentinel, HTTP code
// and reason an HTTP layer would write.
func wantStatus(t testing.TB, err error, sentinel error, code int32) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v (%d)", sentinel, code)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("got %v, want %v", err, sentinel)
	}
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("%v is not a StatusError", err)
	}
	if got := apierrors.APIStatus(err.(*Error)).Status().Code; got != code || se.ErrStatus.Code != code {
		t.Fatalf("code %d, want %d (%v)", got, code, err)
	}
	return err.(*Error)
}

var _ = http.StatusOK

func rvOf(t testing.TB, obj interface{ GetResourceVersion() string }) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(obj.GetResourceVersion(), &n); err != nil {
		t.Fatalf("resourceVersion %q: %v", obj.GetResourceVersion(), err)
	}
	return n
}

func names(l *unstructured.UnstructuredList) []string {
	out := make([]string, 0, len(l.Items))
	for _, it := range l.Items {
		out = append(out, it.GetNamespace()+"/"+it.GetName())
	}
	return out
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
