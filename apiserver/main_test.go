package apiserver

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/stratadev/strata/storage"
	"github.com/stratadev/strata/storage/etcd/etcdtest"
)

// testEtcd is the embedded etcd TestMain starts once; each test server
// keeps its objects under its own key prefix.
var testEtcd *clientv3.Client

func TestMain(m *testing.M) { os.Exit(etcdtest.Main(m, &testEtcd)) }

var serverSeq atomic.Int64

// testServer is an API server over HTTP on loopback, with its clients.
type testServer struct {
	api     *Server
	http    *httptest.Server
	config  *rest.Config
	client  kubernetes.Interface
	dynamic dynamic.Interface
}

func newTestServer(t testing.TB, tweak ...func(*Config)) *testServer {
	t.Helper()
	prefix := fmt.Sprintf("/test-%d-%d/registry", os.Getpid(), serverSeq.Add(1))
	cfg := Config{
		Client:  testEtcd,
		Version: version.Info{Major: "1", Minor: "37", GitVersion: "v1.37.2"},
		Storage: func(c *storage.Config) {
			c.Prefix = prefix
			c.TooLargeRVWait = 500 * time.Millisecond
			c.ProgressInterval = 100 * time.Millisecond
		},
	}
	for _, f := range tweak {
		f(&cfg)
	}
	api, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := api.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := api.EnsureNamespaces(ctx); err != nil {
		t.Fatal(err)
	}
	ts := &testServer{api: api, http: httptest.NewServer(api.Handler())}
	t.Cleanup(func() { ts.http.Close(); api.Close() })
	ts.config = &rest.Config{Host: ts.http.URL, QPS: -1}
	ts.client = kubernetes.NewForConfigOrDie(ts.config)
	ts.dynamic = dynamic.NewForConfigOrDie(ts.config)
	return ts
}
