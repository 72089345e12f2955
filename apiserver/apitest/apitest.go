// Package apitest runs the API over an embedded etcd for the tests of
// the packages that drive it (controllers, bootstrap) without a whole
// server: no TLS, no authentication, no filters.
package apitest

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/version"

	"github.com/stratadev/strata/apiserver"
	"github.com/stratadev/strata/storage/etcd/etcdtest"
)

// API is a running API and what reaches it.
type API struct {
	*apiserver.Server
	// HTTP serves the API's handler.
	HTTP *httptest.Server
	// Etcd is a client of the API's etcd member.
	Etcd *clientv3.Client
}

// Start runs an API with the built-in kinds over an embedded etcd of the
// test's own, ready and with the default namespaces; everything stops
// when the test ends.
func Start(t testing.TB) *API {
	t.Helper()
	client := etcdtest.Start(t)
	api, err := apiserver.New(apiserver.Config{Client: client, Version: version.Info{GitVersion: "v1.37.2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := api.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if err := api.EnsureNamespaces(ctx); err != nil {
		t.Fatal(err)
	}
	h := httptest.NewServer(api.Handler())
	t.Cleanup(h.Close)
	return &API{Server: api, HTTP: h, Etcd: client}
}

// WaitWithin polls cond until it holds, for at most deadline; cond's
// errors are retried, the last one reported.
func WaitWithin(t testing.TB, deadline time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, deadline, true,
		func(context.Context) (bool, error) {
			ok, err := cond()
			last = err
			return ok, nil
		})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last: %v)", what, err, last)
	}
}
