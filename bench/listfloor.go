package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// The list floor is the floor (floor.go) of a list: the floor server
// answers a GET of the namespace's ConfigMaps with a JSON list of the
// objects strata stores there, their stored bytes put together once, at
// the first list; every later list writes those bytes and does nothing
// else (no revision check, no encoding). list-floor ÷ kube list is the
// highest list throughput ratio any server could reach with this client.

const opListFloor = "list-floor"

// listBody is the namespace's ConfigMaps as one JSON list, from their
// stored bytes (JSON objects with apiVersion and kind, as a list's items
// carry them).
func listBody(ctx context.Context, raw *clientv3.Client) ([]byte, error) {
	resp, err := raw.Get(ctx, storedPrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("bench: the list floor reading %s: %w", storedPrefix, err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":%q},"items":[`,
		strconv.FormatInt(resp.Header.Revision, 10))
	for i, kv := range resp.Kvs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(bytes.TrimSpace(kv.Value))
	}
	b.WriteString("]}")
	return b.Bytes(), nil
}

// serveList answers a list with body, read by the first.
func serveList(w http.ResponseWriter, body func() ([]byte, error)) {
	data, err := body()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}
