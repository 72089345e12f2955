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
)

// Handler puts value to raw on a POST and answers value on a GET of an
// object, the namespace's stored ConfigMaps on a list (list.go), each
// after a shared revision read in ReadNamespace (read.go); it serves the
// watch cell's watches and writes (watch.go); an apply is an apply of a
// Deployment (apply.go), a PUT or another PATCH a write of a ConfigMap
// (write.go), each with its field manager, built by the first.
func Handler(raw *clientv3.Client, value string) http.Handler {
	var n atomic.Int64
	deployments := sync.OnceValues(deploymentFieldManager)
	configMaps := sync.OnceValues(newConfigMapWriter)
	list := sync.OnceValues(func() (listBodies, error) { return readListBodies(context.Background(), raw) })
	watches := newWatchFloor(raw, value)
	reads := newReadFloor(raw, value)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/namespaces/"+ReadNamespace+"/configmaps"):
			reads.serve(w, r, func(w http.ResponseWriter, r *http.Request) { serveList(w, r, list) })
			return
		case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/namespaces/"+ReadNamespace+"/"):
			reads.serve(w, r, reads.answerValue)
			return
		case isWatch(r):
			watches.serveWatch(w, r)
			return
		case r.Method == http.MethodPatch && path.Base(r.URL.Path) == layout.WatchTarget:
			watches.serveWrite(w, r)
			return
		case r.Method == http.MethodGet && path.Base(r.URL.Path) == "configmaps":
			serveList(w, r, list)
			return
		case r.Method == http.MethodPatch && r.Header.Get("Content-Type") == string(types.ApplyYAMLPatchType):
			fm, err := deployments()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			applyFloorHandler(raw, fm)(w, r)
			return
		case r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/namespaces/"+FMNamespace+"/"):
			cw, err := configMaps()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			serveFloorWrite(w, r, func(ctx context.Context, body []byte) (int, []byte, error) {
				return cw.create(ctx, raw, body)
			})
			return
		case r.Method == http.MethodPatch || r.Method == http.MethodPut:
			cw, err := configMaps()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			cw.serveHTTP(raw, w, r)
			return
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		status := http.StatusOK
		if r.Method == http.MethodPost {
			if err := layout.PutIfAbsent(r.Context(), raw, fmt.Sprintf("%sfloor/%d", layout.RawPrefix, n.Add(1)), value); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			status = http.StatusCreated
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, value)
	})
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
