package floor

import (
	"context"
	"io"
	"net/http"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/stratadev/strata/bench/internal/layout"
	"github.com/stratadev/strata/internal/sharedread"
)

// The consistent-read floor is the get floor plus what a
// linearizable GET cannot skip: learning, after the request arrived, that
// the answer is current. That takes one etcd round trip begun after the
// request; kube-apiserver reads the object itself, strata its revision,
// shared by the GETs that arrived while the last read was in flight
// (internal/sharedread). The floor makes that shared read — the same code,
// the same count-only range strata's watch cache makes — and answers the
// stored bytes. A server answering consistent GETs faster would have to
// skip etcd, and could then serve a value older than a write its client saw
// acknowledged.

const (
	// ReadNamespace is the namespace of the GETs the floor answers
	// after a revision read; a list there is the list floor (list.go) with the
	// same shared read: the floor of a consistent list, which kube-apiserver
	// also serves from its watch cache once a revision read shows the cache
	// current.
	ReadNamespace = "floor-read"
	// readFloorKey is the key the floor's revision reads count, as strata's
	// count its compaction key.
	readFloorKey = layout.RawPrefix + "floor-read"
)

// readFloor answers GETs with value once a shared revision read begun
// after each arrived has answered.
type readFloor struct {
	value     string
	revisions *sharedread.Reader
}

func newReadFloor(raw *clientv3.Client, value string) *readFloor {
	read := func(ctx context.Context) (int64, error) {
		resp, err := raw.Get(ctx, readFloorKey, clientv3.WithCountOnly())
		if err != nil {
			return 0, err
		}
		return resp.Header.Revision, nil
	}
	return &readFloor{value: value, revisions: sharedread.New(read, 10*time.Second)}
}

// serve answers r with answer once a revision read begun after r
// arrived has answered.
func (f *readFloor) serve(w http.ResponseWriter, r *http.Request, answer func(http.ResponseWriter, *http.Request)) {
	if _, err := f.revisions.Current(r.Context()); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	answer(w, r)
}

// answerValue answers the floor's stored ConfigMap.
func (f *readFloor) answerValue(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, f.value)
}
