package apiserver

import (
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
// line, flushed as it happens, until timeoutSeconds (or a random time
// between the minimum watch timeout and twice it) or the client leaves. A
// start the store cannot serve (410) is an ERROR event, then the end.
func (s *Server) serveWatch(w http.ResponseWriter, r *http.Request, c *call) {
	form, err := negotiateOutput(r)
	if err != nil {
		writeError(w, err)
		return
	}
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
	if form == outputTable {
		if tableOpts, err = tableOptions(r.URL.Query()); err != nil {
			writeError(w, err)
			return
		}
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	gvr := c.res.kind.GroupVersionResource()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.watchesEnd:
			return
		case ev, ok := <-watcher.ResultChan():
			if !ok {
				return
			}
			data, err := s.encodeEvent(r, c, form, tableOpts, ev)
			if err != nil {
				data, _ = encodeJSON(errorEvent(err))
			}
			// data may be shared with other watchers (the event cache):
			// the newline goes separately, never appended to it.
			if _, err := w.Write(data); err != nil {
				return
			}
			if _, err := w.Write(newline); err != nil {
				return
			}
			if s.cfg.Metrics != nil {
				s.cfg.Metrics.WatchEventSent(gvr, len(data)+len(newline))
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
	}
}

// encodeEvent encodes one event in the negotiated form; objects as they
// are come from the resource's cache of encoded events.
func (s *Server) encodeEvent(r *http.Request, c *call, form output, tableOpts *metav1.TableOptions, ev watch.Event) ([]byte, error) {
	if obj, ok := ev.Object.(*unstructured.Unstructured); ok && form == outputObject && ev.Type != watch.Bookmark {
		return c.res.events.encodeEvent(ev.Type, obj)
	}
	return encodeJSON(s.eventBody(r, c, form, tableOpts, ev))
}

// eventBody renders one event's object in the negotiated form.
func (s *Server) eventBody(r *http.Request, c *call, form output, tableOpts *metav1.TableOptions, ev watch.Event) watchEvent {
	switch obj := ev.Object.(type) {
	case *metav1.Status:
		st := *obj
		st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		return watchEvent{Type: ev.Type, Object: &st}
	case *unstructured.Unstructured:
		if ev.Type == watch.Bookmark {
			return watchEvent{Type: ev.Type, Object: obj.Object}
		}
		switch form {
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
