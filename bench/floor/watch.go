package floor

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/stratadev/strata/bench/internal/layout"
)

// The watch floor is the floor of the watch cell: the floor
// server holds the cell's watches open and, on each strategic PATCH of the
// watched ConfigMap, puts the new object to etcd, encodes its MODIFIED
// event once and writes it to every watch, flushing each. A server cannot
// deliver with less: it has at least to store the write and send each
// watcher its event (and a real one learns of the write from etcd's watch,
// which the floor skips). Its p99 ÷ kube-apiserver's bounds the watch
// target from below.

// watchFloor fans the watched object's events out to the open watches.
type watchFloor struct {
	raw *clientv3.Client
	// object is the stored ConfigMap the events carry, read once (nil,
	// and err why, when value is not one).
	object *corev1.ConfigMap
	err    error

	mu      sync.Mutex
	streams map[chan encodedEvent]struct{}
}

// encodedEvent is one event as a JSON watch line and as a protobuf watch
// frame: each watch writes the one its client asked for.
type encodedEvent struct{ json, protobuf []byte }

func newWatchFloor(raw *clientv3.Client, value string) *watchFloor {
	f := &watchFloor{raw: raw, object: &corev1.ConfigMap{}, streams: map[chan encodedEvent]struct{}{}}
	if err := json.Unmarshal([]byte(value), f.object); err != nil {
		f.object, f.err = nil, fmt.Errorf("floor: the watch floor's object: %w", err)
	}
	return f
}

// serveWatch streams the events of the writes made while the request
// lasts, as protobuf frames when the client accepts them (client-go's
// clientsets do), else as a JSON watch (one event per line).
func (f *watchFloor) serveWatch(w http.ResponseWriter, r *http.Request) {
	proto := strings.Contains(r.Header.Get("Accept"), runtime.ContentTypeProtobuf)
	ch := make(chan encodedEvent, 64)
	f.mu.Lock()
	f.streams[ch] = struct{}{}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.streams, ch)
		f.mu.Unlock()
	}()
	flusher, _ := w.(http.Flusher)
	contentType := runtime.ContentTypeJSON
	if proto {
		contentType = runtime.ContentTypeProtobuf + ";stream=watch"
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case ev := <-ch:
			data := ev.json
			if proto {
				data = ev.protobuf
			}
			if _, err := w.Write(data); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
	}
}

// serveWrite applies a patch of the watched ConfigMap's data.seq, puts the
// object to etcd and sends its event to every watch.
func (f *watchFloor) serveWrite(w http.ResponseWriter, r *http.Request) {
	var patch struct {
		Data struct {
			Seq string `json:"seq"`
		} `json:"data"`
	}
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(body, &patch)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	obj, event, err := f.encode(patch.Data.Seq)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if _, err := f.raw.Put(r.Context(), layout.RawPrefix+"floor-watch/"+layout.WatchTarget, string(obj)); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	f.mu.Lock()
	streams := make([]chan encodedEvent, 0, len(f.streams))
	for ch := range f.streams {
		streams = append(streams, ch)
	}
	f.mu.Unlock()
	for _, ch := range streams {
		select {
		case ch <- event:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(obj)
}

// encode is the watched ConfigMap with data.seq set, and its MODIFIED
// event in both encodings.
func (f *watchFloor) encode(seq string) ([]byte, encodedEvent, error) {
	if f.err != nil {
		return nil, encodedEvent{}, f.err
	}
	cm := f.object.DeepCopy()
	cm.Name = layout.WatchTarget
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["seq"] = seq
	obj, err := json.Marshal(cm)
	if err != nil {
		return nil, encodedEvent{}, err
	}
	var ev encodedEvent
	if ev.json, err = json.Marshal(map[string]any{"type": "MODIFIED", "object": json.RawMessage(obj)}); err != nil {
		return nil, encodedEvent{}, err
	}
	ev.json = append(ev.json, '\n')
	var msg bytes.Buffer
	if err := protobufCodec.Encode(cm, &msg); err != nil {
		return nil, encodedEvent{}, err
	}
	frame := metav1.WatchEvent{Type: "MODIFIED", Object: runtime.RawExtension{Raw: msg.Bytes()}}
	ev.protobuf = make([]byte, 4+frame.Size())
	binary.BigEndian.PutUint32(ev.protobuf, uint32(frame.Size()))
	_, err = frame.MarshalToSizedBuffer(ev.protobuf[4:])
	return obj, ev, err
}

// protobufCodec encodes objects as client-go's scheme does, in their
// envelope.
var protobufCodec = protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)

// isWatch says whether a GET is a watch.
func isWatch(r *http.Request) bool {
	w := r.URL.Query().Get("watch")
	return r.Method == http.MethodGet && (w == "true" || w == "1")
}
