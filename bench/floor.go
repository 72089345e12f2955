package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/stratadev/strata/apiserver"
)

// The floor is what any API server in front of etcd pays for a request,
// whatever it does with the object: client-go's request and response, and
// HTTP/2 over TLS on loopback — and, for a create, the same etcd put. Its
// handler does nothing else: a POST reads the body without decoding it,
// puts the bytes strata stores for a ConfigMap under a new key and answers
// them with 201; a GET answers those bytes with 200. Measured beside
// strata's cells, floor ÷ put is the highest create ÷ put any server could
// reach on this machine with this client, and the floor's CPU per request
// (it runs as a child process, as strata does) is the least any server
// spends on one: no server's CPU per request can fall below it.

const (
	opCreateFloor = "create-floor"
	opGetFloor    = "get-floor"
	sideFloor     = "floor"
	childFloor    = "floor"
)

// floor is the bare HTTP/2 server, its client, and its process (nil when
// it runs in this process, under -in-process).
type floor struct {
	srv  *httptest.Server // in this process only
	proc *process
	cfg  *rest.Config
}

// floorHandler puts value to raw on a POST and answers value on a GET of
// an object, the namespace's stored ConfigMaps on a list (listfloor.go),
// each after a shared revision read in readFloorNamespace (readfloor.go);
// it serves the watch cell's watches and writes (watchfloor.go); an
// apply is an apply of a Deployment (applyfloor.go), a PUT or another
// PATCH a write of a ConfigMap (writefloor.go), each with its field
// manager, built by the first.
func floorHandler(raw *clientv3.Client, value string) http.Handler {
	var n atomic.Int64
	deployments := sync.OnceValues(deploymentFieldManager)
	configMaps := sync.OnceValues(newConfigMapWriter)
	list := sync.OnceValues(func() (listBodies, error) { return readListBodies(context.Background(), raw) })
	watches := newWatchFloor(raw, value)
	reads := newReadFloor(raw, value)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/namespaces/"+readFloorNamespace+"/configmaps"):
			reads.serve(w, r, func(w http.ResponseWriter, r *http.Request) { serveList(w, r, list) })
			return
		case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/namespaces/"+readFloorNamespace+"/"):
			reads.serve(w, r, reads.answerValue)
			return
		case isWatch(r):
			watches.serveWatch(w, r)
			return
		case r.Method == http.MethodPatch && path.Base(r.URL.Path) == watchTarget:
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
		case r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/namespaces/"+createFMNamespace+"/"):
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
			if err := putIfAbsent(r.Context(), raw, fmt.Sprintf("%sfloor/%d", rawPrefix, n.Add(1)), value); err != nil {
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

// serveFloor starts the floor server on a free loopback port, with
// strata's HTTP/2 server: the floor's transport is strata's.
func serveFloor(raw *clientv3.Client, value string) (*httptest.Server, error) {
	srv := httptest.NewUnstartedServer(floorHandler(raw, value)) // on 127.0.0.1
	srv.EnableHTTP2 = true
	if err := apiserver.ConfigureHTTP2(srv.Config); err != nil {
		return nil, fmt.Errorf("bench: floor server: %w", err)
	}
	srv.StartTLS()
	return srv, nil
}

// startFloor starts the floor server: in this process when inProcess is
// set, else as a child process with an etcd client of its own.
func (e *env) startFloor(ctx context.Context, inProcess bool, value string) (*floor, error) {
	f := &floor{}
	url := ""
	if inProcess {
		srv, err := serveFloor(e.raw, value)
		if err != nil {
			return nil, err
		}
		f.srv, url = srv, srv.URL
	} else {
		spec := childSpec{Mode: childFloor, EtcdServers: e.etcd.endpoints, Value: value}
		p, words, err := startChild(ctx, spec, filepath.Join(e.tmp, "floor.log"))
		if err != nil {
			return nil, err
		}
		f.proc, url = p, words
	}
	// newTarget makes its clients (prepareFloor).
	f.cfg = &rest.Config{Host: url, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	return f, nil
}

// pid is the floor's process (0: this one, not measured).
func (f *floor) pid() int {
	if f == nil || f.proc == nil {
		return 0
	}
	return f.proc.cmd.Process.Pid
}

func (f *floor) close() error {
	switch {
	case f == nil:
	case f.srv != nil:
		f.srv.Close()
	default:
		return f.proc.stop()
	}
	return nil
}

// prepareFloor starts the floor server (once the stored bytes are known),
// for whichever of its cells runs first.
func (r *runner) prepareFloor(ctx context.Context) error {
	if r.env.floor != nil {
		return nil
	}
	f, err := r.env.startFloor(ctx, r.cfg.InProcess, r.value)
	if err != nil {
		return err
	}
	r.env.floor = f
	t, err := newTarget(sideFloor, f.cfg, f.pid())
	if err != nil {
		return err
	}
	// The floor lists what the raw range reads (listfloor.go).
	t.listItems = r.rawItems
	*r.floorT = *t
	return nil
}

// floorOp is the floor's op name, run by run.
func (r *runner) floorOp(name string, run func(context.Context, call) error) op {
	return op{side: sideFloor, name: name, prepare: r.prepareFloor, run: run,
		pidOf: func() int { return r.env.floor.pid() }}
}
