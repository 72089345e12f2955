package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The floor is what any API server in front of etcd pays for a create,
// whatever it does with the object: client-go's request and response,
// HTTP/2 over TLS on loopback, and the same etcd put. Its handler does
// nothing else: it reads the body without decoding it, puts the bytes
// strata stores for a ConfigMap under a new key, and answers them with
// 201. Measured beside strata's create and etcd's put, floor ÷ put is the
// highest create ÷ put any server could reach on this machine with this
// client.

const (
	opCreateFloor = "create-floor"
	sideFloor     = "floor"
)

// floor is the bare HTTP/2 server and its client.
type floor struct {
	srv *httptest.Server
	cs  kubernetes.Interface
}

// startFloor starts the floor server on loopback, putting value to raw.
func startFloor(raw *clientv3.Client, value string) (*floor, error) {
	var n atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := putIfAbsent(r.Context(), raw, fmt.Sprintf("%sfloor/%d", rawPrefix, n.Add(1)), value); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, value)
	})
	srv := httptest.NewUnstartedServer(h) // on 127.0.0.1
	srv.EnableHTTP2 = true
	srv.StartTLS()
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS: -1, Burst: 1 << 20, UserAgent: "strata-bench"}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("bench: floor client: %w", err)
	}
	return &floor{srv: srv, cs: cs}, nil
}

func (f *floor) close() {
	if f != nil {
		f.srv.Close()
	}
}

// floorCreate is strataCreate against the floor server.
func (r *runner) floorCreate(ctx context.Context, c call) error {
	cm, err := r.env.floor.cs.CoreV1().ConfigMaps(namespace).Create(ctx,
		r.configMap(fmt.Sprintf("floor-c%d-%d", c.conc, c.i)), metav1.CreateOptions{})
	if err == nil && cm.Name == "" {
		err = errors.New("floor server answered a ConfigMap without a name")
	}
	return err
}

// prepareFloor starts the floor server (once the stored bytes are known).
func (r *runner) prepareFloor(context.Context) error {
	f, err := startFloor(r.env.raw, r.value)
	if err != nil {
		return err
	}
	r.env.floor = f
	return nil
}
