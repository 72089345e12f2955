package floor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stratadev/strata/apiserver"
	"github.com/stratadev/strata/bench/internal/layout"
	"github.com/stratadev/strata/fieldmanager"
)

// Handler puts value to raw on a POST and answers value on a GET of an
// object, the namespace's stored ConfigMaps on a list (list.go), each
// after a shared revision read in ReadNamespace (read.go); it serves the
// watch cell's watches and writes (watch.go); an apply is an apply of a
// Deployment (apply.go), a PUT or another PATCH a write of a ConfigMap
// (write.go), each with its field manager, built by the first.
func Handler(raw *clientv3.Client, value string) http.Handler {
	return &handler{raw: raw, value: value,
		deployments: sync.OnceValues(deploymentFieldManager),
		configMaps:  sync.OnceValues(newConfigMapWriter),
		list:        sync.OnceValues(func() (listBodies, error) { return readListBodies(context.Background(), raw) }),
		watches:     newWatchFloor(raw, value),
		reads:       newReadFloor(raw, value)}
}

// handler is the floor's state: the stored value, the floors built by
// their first request, and the count that names each created key.
type handler struct {
	raw         *clientv3.Client
	value       string
	n           atomic.Int64
	deployments func() (*fieldmanager.Manager, error)
	configMaps  func() (*configMapWriter, error)
	list        func() (listBodies, error)
	watches     *watchFloor
	reads       *readFloor
}

// ServeHTTP sends each request to its floor (Handler's comment lists
// them); what is left is the do-nothing create and get.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/namespaces/"+ReadNamespace+"/configmaps"):
		h.reads.serve(w, r, func(w http.ResponseWriter, r *http.Request) { serveList(w, r, h.list) })
	case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/namespaces/"+ReadNamespace+"/"):
		h.reads.serve(w, r, h.reads.answerValue)
	case isWatch(r):
		h.watches.serveWatch(w, r)
	case r.Method == http.MethodPatch && path.Base(r.URL.Path) == layout.WatchTarget:
		h.watches.serveWrite(w, r)
	case r.Method == http.MethodGet && path.Base(r.URL.Path) == "configmaps":
		serveList(w, r, h.list)
	case r.Method == http.MethodPatch && r.Header.Get("Content-Type") == string(types.ApplyYAMLPatchType):
		if fm, ok := built(w, h.deployments); ok {
			applyFloorHandler(h.raw, fm)(w, r)
		}
	case r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/namespaces/"+FMNamespace+"/"):
		if cw, ok := built(w, h.configMaps); ok {
			serveFloorWrite(w, r, func(ctx context.Context, body []byte) (int, []byte, error) {
				return cw.create(ctx, h.raw, body)
			})
		}
	case r.Method == http.MethodPatch || r.Method == http.MethodPut:
		if cw, ok := built(w, h.configMaps); ok {
			cw.serveHTTP(h.raw, w, r)
		}
	default:
		h.serveValue(w, r)
	}
}

// built is what build returns, or false after answering its error.
func built[T any](w http.ResponseWriter, build func() (T, error)) (T, bool) {
	v, err := build()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
	return v, err == nil
}

// serveValue is the do-nothing floor: a POST puts the stored value under a
// new key and answers it with 201, anything else answers it with 200.
func (h *handler) serveValue(w http.ResponseWriter, r *http.Request) {
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	status := http.StatusOK
	if r.Method == http.MethodPost {
		key := fmt.Sprintf("%sfloor/%d", layout.RawPrefix, h.n.Add(1))
		if err := layout.PutIfAbsent(r.Context(), h.raw, key, h.value); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		status = http.StatusCreated
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, h.value)
}

// Serve starts the floor server on a free loopback port, with strata's
// HTTP/2 server: the floor's transport is strata's.
func Serve(raw *clientv3.Client, value string) (*httptest.Server, error) {
	srv := httptest.NewUnstartedServer(Handler(raw, value)) // on 127.0.0.1
	srv.EnableHTTP2 = true
	if err := apiserver.ConfigureHTTP2(srv.Config); err != nil {
		return nil, fmt.Errorf("floor: floor server: %w", err)
	}
	srv.StartTLS()
	return srv, nil
}
