package apiserver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// watchEvent is metav1.WatchEvent with the object inline.
type watchEvent struct {
	Type   watch.EventType `json:"type"`
	Object any             `json:"object"`
}

// serveWatch streams changes as kube-apiserver does: one JSON WatchEvent per
// line (or one length-prefixed protobuf WatchEvent), flushed as it happens,
// until timeoutSeconds (or a random time between the minimum watch timeout
// and twice it) or the client leaves. A start the store cannot serve (410)
// is an ERROR event, then the end.
func (s *Server) serveWatch(w http.ResponseWriter, r *http.Request, c *call) {
	in, opts, err := parseListOptions(r.URL.Query(), true, c.res.kind)
	if err != nil {
		writeError(w, err)
		return
	}
	switch {
	case in.TimeoutSeconds == nil || *in.TimeoutSeconds == 0:
		// As kube-apiserver: no timeout is a random one between the
		// minimum request timeout and twice that.
		min := s.cfg.MinWatchTimeout
		opts.Timeout = min + time.Duration(rand.Int64N(int64(min)))
	case *in.TimeoutSeconds < 0:
		// kube-apiserver's timer fires at once: an empty stream.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		return
	}
	watcher, err := c.res.store.Watch(r.Context(), c.info.Namespace, opts)
	if err != nil {
		writeError(w, err)
		return
	}
	defer watcher.Stop()
	var tableOpts *metav1.TableOptions
	if c.media.form == outputTable {
		if tableOpts, err = tableOptions(r.URL.Query()); err != nil {
			writeError(w, err)
			return
		}
	}
	flusher, _ := w.(http.Flusher)
	contentType, separator := runtime.ContentTypeJSON, newline
	if c.media.enc == encodingProtobuf {
		contentType, separator = runtime.ContentTypeProtobuf+";stream=watch", nil
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	gvr := c.res.kind.GroupVersionResource()
	next, stop := s.nextEvent(r.Context(), watcher)
	defer stop()
	for {
		ev, ok := next()
		if !ok {
			return
		}
		data, err := s.encodeEvent(r, c, tableOpts, ev)
		if err != nil {
			data, _ = s.encodeEvent(r, c, nil, watch.Event{Type: watch.Error, Object: statusOf(err)})
		}
		// kube-apiserver prints a Table's column definitions in the
		// first event only.
		if tableOpts != nil && !tableOpts.NoHeaders {
			tableOpts = &metav1.TableOptions{NoHeaders: true, IncludeObject: tableOpts.IncludeObject}
		}
		// data may be shared with other watchers (the event cache):
		// the newline goes separately, never appended to it.
		if _, err := w.Write(data); err != nil {
			return
		}
		if _, err := w.Write(separator); err != nil {
			return
		}
		if s.cfg.Metrics != nil {
			s.cfg.Metrics.WatchEventSent(gvr, len(data)+len(separator))
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// puller is a watch whose events its reader takes in its own goroutine
// (storage's watch cache): no goroutine hands them over.
type puller interface {
	Next(ctx context.Context) (watch.Event, bool)
}

// nextEvent returns what reads watcher's events one at a time, until the
// watch, the request (ctx) or every watch (EndWatches) ends, and what
// ends the reading.
func (s *Server) nextEvent(ctx context.Context, watcher watch.Interface) (next func() (watch.Event, bool), stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	stopAfter := context.AfterFunc(s.watches, cancel)
	stop = func() {
		stopAfter()
		cancel()
	}
	if p, ok := watcher.(puller); ok {
		return func() (watch.Event, bool) { return p.Next(ctx) }, stop
	}
	return func() (watch.Event, bool) {
		select {
		case ev, ok := <-watcher.ResultChan():
			return ev, ok
		case <-ctx.Done():
			return watch.Event{}, false
		}
	}, stop
}

// encodeEvent encodes one event in the negotiated form and encoding;
// objects as they are come from the resource's caches of encoded events
// (JSON) or objects (protobuf).
func (s *Server) encodeEvent(r *http.Request, c *call, tableOpts *metav1.TableOptions, ev watch.Event) ([]byte, error) {
	obj, isObject := ev.Object.(*unstructured.Unstructured)
	if c.media.enc == encodingProtobuf {
		return s.encodeProtobufEvent(r, c, tableOpts, ev)
	}
	if isObject && c.media.form == outputObject && ev.Type != watch.Bookmark {
		return c.res.events.encodeEvent(ev.Type, obj)
	}
	return encodeJSON(s.eventBody(r, c, tableOpts, ev))
}

// encodeProtobufEvent is encodeEvent in protobuf: a length-prefixed
// WatchEvent whose object is in its envelope.
func (s *Server) encodeProtobufEvent(r *http.Request, c *call, tableOpts *metav1.TableOptions, ev watch.Event) ([]byte, error) {
	var object []byte
	obj, isObject := ev.Object.(*unstructured.Unstructured)
	switch {
	case isObject && c.media.form == outputObject && ev.Type != watch.Bookmark:
		// One frame per event, shared by the resource's watchers. The
		// message is not kept for lists and gets (c.res.protos) as well:
		// the frame holds it already, an event's revision is rarely
		// listed, and an informer's initial events (a watch-list) would
		// fill that cache with every object of the resource (24 MB of
		// 20k ConfigMaps), as the JSON events do not.
		return c.res.protoEvents.cachedEvent(ev.Type, obj, func() ([]byte, error) {
			msg, err := c.res.kind.ProtobufMessage(obj.Object)
			if err != nil {
				return nil, err
			}
			return protobufWatchFrame(string(ev.Type), protobufObject(c.res.kind.GVK, msg))
		})
	case isObject && c.media.form == outputObject && ev.Type == watch.Bookmark:
		msg, err := c.res.kind.ProtobufMessage(obj.Object) // not worth a cache entry
		if err != nil {
			return nil, err
		}
		object = protobufObject(c.res.kind.GVK, msg)
	default:
		body := s.eventBody(r, c, tableOpts, ev)
		ro, ok := body.Object.(runtime.Object)
		if !ok {
			return nil, fmt.Errorf("no protobuf encoding of %T", body.Object)
		}
		var err error
		if object, err = encodeProtobuf(ro); err != nil {
			return nil, err
		}
	}
	return protobufWatchFrame(string(ev.Type), object)
}

// eventBody renders one event's object in the negotiated form. A bookmark
// is transformed as any other object, as kube-apiserver's watch encoder
// does: a metadata-only watch gets a PartialObjectMetadata bookmark (a
// client decoding only that kind would fail on the full one), a Table
// watch a Table of one row.
func (s *Server) eventBody(r *http.Request, c *call, tableOpts *metav1.TableOptions, ev watch.Event) watchEvent {
	switch obj := ev.Object.(type) {
	case *metav1.Status:
		st := *obj
		st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		return watchEvent{Type: ev.Type, Object: &st}
	case *unstructured.Unstructured:
		switch c.media.form {
		case outputTable:
			table, err := c.res.kind.Table(r.Context(), []*unstructured.Unstructured{obj}, false, tableOpts)
			if err != nil {
				return errorEvent(err)
			}
			table.ResourceVersion = obj.GetResourceVersion()
			return watchEvent{Type: ev.Type, Object: table}
		case outputPartial:
			return watchEvent{Type: ev.Type, Object: partialOf(obj)}
		}
		return watchEvent{Type: ev.Type, Object: obj.Object}
	}
	return watchEvent{Type: ev.Type, Object: runtime.Unknown{}}
}

func errorEvent(err error) watchEvent {
	return watchEvent{Type: watch.Error, Object: statusOf(err)}
}

var newline = []byte{'\n'}
