package floor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/stratadev/strata/bench/internal/layout"
)

// The list floor is the floor of a list: the floor server
// answers a GET of the namespace's ConfigMaps with a list of the objects
// strata stores there, put together once, at the first list, in JSON
// (their stored bytes) and in protobuf; every later list writes the bytes
// of the media type the client asks for first and does nothing else (no
// revision check, no encoding). list-floor ÷ kube list is the highest
// list throughput ratio any server could reach with this client, and the
// typed floors (list-protobuf-floor, list-json-floor: the protobuf cells'
// lists, every item decoded by the client) are the same for the typed
// lists informers and controllers make.

// listBodies are the namespace's ConfigMaps as one list in each media
// type the floor answers.
type listBodies struct {
	json, protobuf []byte
}

// readListBodies reads the namespace's stored ConfigMaps (JSON objects
// with apiVersion and kind, as a list's items carry them) and encodes
// them as a list in JSON and in protobuf.
func readListBodies(ctx context.Context, raw *clientv3.Client) (listBodies, error) {
	resp, err := raw.Get(ctx, layout.StoredPrefix, clientv3.WithPrefix())
	if err != nil {
		return listBodies{}, fmt.Errorf("floor: the list floor reading %s: %w", layout.StoredPrefix, err)
	}
	rv := strconv.FormatInt(resp.Header.Revision, 10)
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":%q},"items":[`, rv)
	l := &corev1.ConfigMapList{Items: make([]corev1.ConfigMap, len(resp.Kvs))}
	l.Kind, l.APIVersion, l.ResourceVersion = "ConfigMapList", "v1", rv
	for i, kv := range resp.Kvs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(bytes.TrimSpace(kv.Value))
		if err := json.Unmarshal(kv.Value, &l.Items[i]); err != nil {
			return listBodies{}, fmt.Errorf("floor: the list floor decoding %s: %w", kv.Key, err)
		}
	}
	b.WriteString("]}")
	pb, err := runtime.Encode(protobuf.NewSerializer(scheme.Scheme, scheme.Scheme), l)
	if err != nil {
		return listBodies{}, fmt.Errorf("floor: the list floor encoding protobuf: %w", err)
	}
	return listBodies{json: b.Bytes(), protobuf: pb}, nil
}

// serveList answers a list with the bodies read by the first, in the
// media type the request's Accept header names first.
func serveList(w http.ResponseWriter, r *http.Request, bodies func() (listBodies, error)) {
	l, err := bodies()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	first, _, _ := strings.Cut(r.Header.Get("Accept"), ",")
	if mt, _, _ := mime.ParseMediaType(first); mt == runtime.ContentTypeProtobuf {
		w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
		w.Write(l.protobuf)
		return
	}
	w.Header().Set("Content-Type", runtime.ContentTypeJSON)
	w.Write(l.json)
}
