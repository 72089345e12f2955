package controllers

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/stratadev/strata/apiserver/apitest"
	"github.com/stratadev/strata/internal/loopback"
)

// startAPI runs an API over an embedded etcd with the controllers sel
// selects, and returns a configuration that reaches the API over HTTP.
// It needs no server: the controllers' own behaviour is what these tests
// look at. Everything stops when the test ends, the controllers first.
func startAPI(t *testing.T, sel Selection) *rest.Config {
	t.Helper()
	api := apitest.Start(t)
	runControllers(t, api.Handler(), sel)
	return &rest.Config{Host: api.HTTP.URL, QPS: -1}
}

// runControllers runs the selected controllers as the server does: on an
// in-process loopback client to handler, with shared informers started
// once the controllers have requested theirs.
func runControllers(t *testing.T, handler http.Handler, sel Selection) {
	t.Helper()
	loop := loopback.New(handler)
	t.Cleanup(loop.Shutdown)
	client, err := kubernetes.NewForConfig(loop.Config())
	if err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(TrimManagedFields))
	stopInformers := make(chan struct{})
	cfg := Config{Client: client, Loopback: loop.Config(), Informers: factory, InformersStop: stopInformers,
		Selection: sel, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	RegisterInformers(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, cfg)
	}()
	factory.Start(stopInformers)
	t.Cleanup(func() {
		cancel()
		<-done
		close(stopInformers)
		factory.Shutdown()
	})
}

// waitWithin polls cond until it holds, for at most deadline; cond's
// errors are retried, the last one reported.
func waitWithin(t *testing.T, deadline time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	apitest.WaitWithin(t, deadline, what, cond)
}

// established says whether crd's Established condition is true: its
// resources are served.
func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
